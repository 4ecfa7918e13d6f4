import { FAULTY_GATEWAYS } from '../test/gateways/faulty-gateways.ts';
import { proveAgainst } from '../test/gateways/prove.ts';
const [id, seed, check] = process.argv.slice(2);
const t = FAULTY_GATEWAYS.find((t) => t.id === id)!;
const { report } = await proveAgainst(t, { seed: Number(seed), numRuns: 8 });
for (const c of report.checks) if (!check || c.id === check) console.log(c.id, c.verdict, c.message.slice(0, 600), c.reproduction?.counterexample?.slice(0, 300));
