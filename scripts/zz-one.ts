import { CLIENT_CATALOGUE, runClientProgram } from '../fixtures/clients/catalogue.ts';
import { formatClientReport } from '../mock-server/client-report/report.ts';
const names = process.argv.slice(2);
for (const name of names) {
  const o = await runClientProgram(CLIENT_CATALOGUE.find((p) => p.name === name)!);
  console.log(name, o.flagged, o.timingDisturbed ?? '');
  console.log(formatClientReport(o.report));
}
