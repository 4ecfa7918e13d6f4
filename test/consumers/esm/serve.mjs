// A plain ES module: the reference gateway served with `node serve.mjs`, and one conformance check run
// against it. No TypeScript, no bundler.
import { createGateway, serve } from 'agent-tool-gateway-harness';
import { runConformance } from 'agent-tool-gateway-harness/conformance';

const gateway = createGateway();
const server = await serve(gateway, { port: 0 }); // 0: a free port
try {
  const health = await fetch(`${server.url}/v1/health`);
  const token = gateway.mintToken('agent-verified');
  const whoami = await fetch(`${server.url}/v1/whoami`, { headers: { 'X-Agent-Identity': token } });
  const { agent } = await whoami.json();
  const report = await runConformance({ baseUrl: server.url, token, only: ['health.without-token'] });
  console.log(
    `health ${health.status}, whoami ${whoami.status} as ${agent.id}, conformance ${report.checks[0].verdict}`,
  );
} finally {
  await server.close();
}
