import { PACED_BEYOND, PACED_FAULTY, PACED_VALID } from './fixtures/gateways/paced-gateways.ts';
import { proveAgainst } from './fixtures/gateways/prove.ts';
import { exitCodeFor } from './conformance/runner.ts';
const ids = process.argv.slice(2);
const seed = Number(process.env.SEED ?? 1);
for (const t of [...PACED_VALID, ...PACED_FAULTY, ...PACED_BEYOND].filter((t) => ids.length === 0 || ids.includes(t.id))) {
  const t0 = Date.now();
  const r = await proveAgainst(t, { seed, numRuns: Number(process.env.RUNS ?? 25), log: process.env.LOG ? (l) => console.log(l) : undefined });
  console.log(`== ${t.id}: exit ${exitCodeFor(r.report, false)} strict ${r.strictExit} virtual ${(r.report.durationMs/1000).toFixed(0)} s waited ${(r.report.waitedMs/1000).toFixed(0)} s, ${r.report.requests} req, real ${Date.now()-t0} ms`);
  for (const c of r.report.checks) if (c.verdict !== 'pass') console.log(`   ${c.verdict} ${c.level} ${c.id} ${c.unobserved ?? ''}: ${c.message.slice(0, 300)}`);
}
process.exit(0);
