/**
 * The top self-time frames of a V8 CPU profile (`node --cpu-prof`, `npm run bench -- --cpu-prof DIR`), and
 * the same time grouped by where the code lives (node:http, streams and sockets, the gateway, dependencies,
 * the garbage collector). With the number of requests the process served, each figure is also given in
 * microseconds per request, so a profile reads like the stage table.
 *
 * Usage: tsx dev/cpuprofile-top.ts FILE.cpuprofile [--top 25] [--requests N] [--skip-ms MS]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

interface FrameCost {
  frame: string;
  /** Self time, microseconds. */
  selfMicros: number;
  /** Share of the busy (non-idle) time. */
  share: number;
}

/** Where a frame's code lives, for the grouped view. */
function areaOf(url: string, functionName: string): string {
  if (functionName === '(garbage collector)') return 'garbage collector';
  if (functionName === '(program)') return 'V8/native (program)';
  if (url.startsWith('node:_http') || url.startsWith('node:internal/http') || url === 'node:http')
    return 'node:http';
  if (
    url.startsWith('node:net') ||
    url.startsWith('node:internal/stream') ||
    url.startsWith('node:stream') ||
    url.startsWith('node:internal/streams') ||
    url.startsWith('node:internal/net')
  )
    return 'node:net + streams';
  if (url.startsWith('node:')) return 'other node internals';
  if (url.includes('node_modules')) return 'dependencies';
  if (url === '') return 'native (no script)';
  return 'gateway code';
}

function shortUrl(url: string): string {
  const parts = url.split('/');
  return parts.slice(-2).join('/');
}

/** Self time per frame (function + location) and per area, idle excluded. */
function profileCosts(
  file: string,
  skipMs = 0,
): { frames: FrameCost[]; areas: FrameCost[]; busyMicros: number } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let elapsed = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    // Each sample's time is the delta to the next sample (the last one's is unknown: skipped).
    const delta = profile.timeDeltas[i + 1] ?? 0;
    elapsed += profile.timeDeltas[i] ?? 0;
    // The first `skipMs` of the process (start-up: loading modules, config, corpus) are left out.
    if (elapsed < skipMs * 1000) continue;
    self.set(id, (self.get(id) ?? 0) + delta);
  }
  const frames = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  for (const [id, micros] of self) {
    const node = byId.get(id) as ProfileNode;
    const { functionName, url } = node.callFrame;
    if (functionName === '(idle)') continue;
    busy += micros;
    const name = frameName(node);
    frames.set(name, (frames.get(name) ?? 0) + micros);
    const area = areaOf(url, functionName);
    areas.set(area, (areas.get(area) ?? 0) + micros);
  }
  const sorted = (m: Map<string, number>) =>
    [...m]
      .map(([frame, selfMicros]) => ({ frame, selfMicros, share: busy > 0 ? selfMicros / busy : 0 }))
      .sort((a, b) => b.selfMicros - a.selfMicros);
  return { frames: sorted(frames), areas: sorted(areas), busyMicros: busy };
}

/**
 * The gateway's request path by what each part of it is for (issue 35): a sample counts for the first frame
 * of its stack, from the leaf up, named in a stage below; samples under none of them are the answer itself
 * (the gateway's answering code and the node:http, socket and kernel work it needs), the collector its own.
 */
const STAGES: readonly (readonly [string, readonly string[]])[] = [
  [
    'analysis (secret readings, request meaning, fingerprints)',
    [
      'noteCallSecrets',
      'noteOutgoingText',
      'noteBodySecrets',
      'noteRefusedCall',
      'noteSecretsIn',
      'requestKey',
      'journalFingerprint',
    ],
  ],
  [
    'journal (the entry, the exchange capture)',
    ['recordCall', 'exchangeOf', 'deferExchange', 'deferUntilRead', 'entryReadings'],
  ],
];

/**
 * Self time per stage of STAGES, the rest as `answer` and `garbage collector`, idle excluded; with each
 * stage's top frames (self time) in `frames`.
 */
function stageCosts(file: string, skipMs = 0): (FrameCost & { frames: FrameCost[] })[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const parent = new Map<number, ProfileNode>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const stageOf = new Map<number, string>();
  const classify = (leaf: ProfileNode): string => {
    const known = stageOf.get(leaf.id);
    if (known) return known;
    let stage = 'answer (gateway code, node:http, sockets, kernel writes)';
    if (leaf.callFrame.functionName === '(garbage collector)') stage = 'garbage collector';
    else if (leaf.callFrame.functionName === '(idle)') stage = '(idle)';
    else
      for (let node: ProfileNode | undefined = leaf; node; node = parent.get(node.id)) {
        const found = STAGES.find(([, names]) => names.includes(node?.callFrame.functionName ?? ''));
        if (found) {
          stage = found[0];
          break;
        }
      }
    stageOf.set(leaf.id, stage);
    return stage;
  };
  const stages = new Map<string, number>();
  const framesOf = new Map<string, Map<string, number>>();
  let busy = 0;
  let elapsed = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i + 1] ?? 0;
    elapsed += profile.timeDeltas[i] ?? 0;
    if (elapsed < skipMs * 1000) continue;
    const leaf = byId.get(profile.samples[i] as number) as ProfileNode;
    const stage = classify(leaf);
    if (stage === '(idle)') continue;
    busy += delta;
    stages.set(stage, (stages.get(stage) ?? 0) + delta);
    const frames = framesOf.get(stage) ?? new Map<string, number>();
    framesOf.set(stage, frames);
    const name = frameName(leaf);
    frames.set(name, (frames.get(name) ?? 0) + delta);
  }
  const costs = (m: Map<string, number>) =>
    [...m]
      .map(([frame, selfMicros]) => ({ frame, selfMicros, share: busy > 0 ? selfMicros / busy : 0 }))
      .sort((a, b) => b.selfMicros - a.selfMicros);
  return costs(stages).map((c) => ({ ...c, frames: costs(framesOf.get(c.frame) ?? new Map()) }));
}

const frameName = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${url ? `${shortUrl(url)}:${lineNumber + 1}` : ''}`.trim();
};

/** The profile as text: the areas, the stages, then the top frames; per request when `requests` is known. */
export function formatProfile(file: string, top: number, requests?: number, skipMs = 0): string {
  const { frames, areas, busyMicros } = profileCosts(file, skipMs);
  const per = (micros: number) => (requests ? (micros / requests).toFixed(2).padStart(8) : '');
  const head = requests ? `${'µs/req'.padStart(8)} ` : '';
  const row = (c: FrameCost) => `${per(c.selfMicros)} ${(c.share * 100).toFixed(1).padStart(5)}%  ${c.frame}`;
  return [
    `busy ${(busyMicros / 1000).toFixed(0)} ms${requests ? ` over ${requests} requests: ${(busyMicros / requests).toFixed(1)} µs/request` : ''}`,
    `${head}share  by area (self time)`,
    ...areas.map(row),
    '',
    `${head}share  by stage of the request path (what the time is for)`,
    ...stageCosts(file, skipMs).flatMap((stage) => [
      row(stage),
      ...stage.frames.slice(0, 8).map((c) => `   ${row(c)}`),
    ]),
    '',
    `${head}share  top ${top} frames by self time`,
    ...frames.slice(0, top).map(row),
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a));
  if (!file) {
    process.stderr.write('usage: tsx dev/cpuprofile-top.ts FILE.cpuprofile [--top 25] [--requests N]\n');
    process.exit(2);
  }
  const option = (name: string) => {
    const i = args.indexOf(name);
    return i === -1 ? undefined : Number(args[i + 1]);
  };
  process.stdout.write(
    `${formatProfile(file, option('--top') ?? 25, option('--requests'), option('--skip-ms') ?? 0)}\n`,
  );
}
