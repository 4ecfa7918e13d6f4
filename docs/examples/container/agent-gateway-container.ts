// Testcontainers for Node: the reference gateway's image beside your tests (vitest, jest, node:test).
// npm install --save-dev testcontainers; the image is built from the harness's Dockerfile and tagged
// agent-gateway (or set AGENT_GATEWAY_IMAGE). Run by test/container-recipes.test.ts.
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';

export interface AgentGatewayContainer {
  /** Where your agent sends its requests, e.g. http://localhost:32768 */
  baseUrl: string;
  /** The admin API's key (X-Admin-Key): reset, clock, faults, the client report. */
  adminKey: string;
  container: StartedTestContainer;
}

/** Starts `IMAGE serve` (extra arguments: `--scenario burst-429`, ...) and waits for GET /v1/health. */
export async function startAgentGateway(
  args: string[] = [],
  image = process.env.AGENT_GATEWAY_IMAGE ?? 'agent-gateway',
): Promise<AgentGatewayContainer> {
  const adminKey = 'testcontainers-admin-key';
  const container = await new GenericContainer(image)
    .withCommand(['serve', ...args])
    .withEnvironment({ AGENT_GATEWAY_ADMIN_KEY: adminKey })
    .withExposedPorts(8787)
    .withWaitStrategy(Wait.forHttp('/v1/health', 8787).forStatusCode(200))
    .start();
  return { baseUrl: `http://${container.getHost()}:${container.getMappedPort(8787)}`, adminKey, container };
}

// In a test file:
//   let gateway: AgentGatewayContainer;
//   beforeAll(async () => { gateway = await startAgentGateway(['--scenario', 'burst-429']); }, 120_000);
//   afterAll(() => gateway.container.stop());
//   it('my agent follows the client rules', async () => {
//     await myAgent(gateway.baseUrl, 'ak_verified_2b8d4f6a1c9e');
//     const report = await fetch(`${gateway.baseUrl}/__admin/report?agent=agent-verified`, {
//       headers: { 'X-Admin-Key': gateway.adminKey },
//     }).then((r) => r.json());
//     expect(report.violations).toEqual([]);
//   });
