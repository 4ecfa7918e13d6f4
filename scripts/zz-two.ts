import { CLIENT_CATALOGUE, runClientProgram } from '../fixtures/clients/catalogue.ts';
const o = await runClientProgram(CLIENT_CATALOGUE.find((p) => p.name === process.argv[2])!);
for (const e of (o.report as any).violations) console.log(e.message);
