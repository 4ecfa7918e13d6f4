/**
 * `npx tsx dev/replay-saved.ts FILE...`: grades journals saved by `client-matrix --save DIR` again, as the
 * client report reads them now, and prints each program's flagged and NOT OBSERVED rules (one line each).
 * For checking a change to the readings against the wrong runs of a loaded machine.
 */
import { readFileSync } from 'node:fs';
import { createClientReport, unobservedRules } from '../mock-server/client-report/report.ts';
import { loadConfig } from '../mock-server/config/load-config.ts';
import { loadCorpus } from '../mock-server/providers/corpus.ts';
import { CLIENT_CATALOGUE } from '../test/clients/catalogue.ts';

const base = loadConfig();
const corpus = loadCorpus(base.corpus);
for (const file of process.argv.slice(2)) {
  const saved = JSON.parse(readFileSync(file, 'utf8')) as { program: string; entries: never[] };
  const program = CLIENT_CATALOGUE.find((p) => p.name === saved.program);
  const config = program?.scenario?.config ? loadConfig({ config: program.scenario.config }) : base;
  const report = createClientReport({
    agent: program?.agent ?? 'agent-verified',
    entries: saved.entries,
    rateLimitRules: config.rate_limits.rules,
    corpus,
  });
  const flagged = [...new Set(report.violations.map((v) => v.rule))];
  const unseen = unobservedRules(report).map((r) => `${r.id} (${r.unobserved})`);
  process.stdout.write(
    `${saved.program} [expects ${program?.rules.join(', ') || 'none'}]: flagged ${flagged.join(', ') || 'none'}; NOT OBSERVED ${unseen.join('; ') || 'none'}\n`,
  );
}
