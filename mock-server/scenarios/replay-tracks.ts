import type { ProtectedEndpointId } from '../../vocabulary/endpoints.ts';
import type { RecordedAnswer, Replay } from './replay-schema.ts';

/** A recorded answer taken for a request: which recorded agent's, and its place (1 = the first). */
export interface TakenAnswer {
  answer: RecordedAnswer;
  /** The recorded agent whose answer it is. */
  agent: string;
  /** Its place among that agent's recorded answers to the endpoint (1 = the first). */
  index: number;
  /** When it was given in the recording, on the recorded gateway's clock (ms since the epoch). */
  recordedAt: number;
}

/**
 * The replay of a scenario, as it is served: each calling agent's requests to an endpoint are answered, in
 * order, by its recorded agent's answers there; once they are used up (or for an agent no recorded agent
 * answers), `take` gives nothing and the reference pipeline answers. Counts are this process's, and start
 * over when the scenario is loaded again (reset).
 */
export function createReplayTracks(replay: Replay) {
  const recordedAt = Date.parse(replay.recorded_at);
  const tracks = new Map<string, Map<ProtectedEndpointId, RecordedAnswer[]>>();
  for (const [agent, answers] of Object.entries(replay.agents)) {
    const byOperation = new Map<ProtectedEndpointId, RecordedAnswer[]>();
    for (const answer of answers) {
      const list = byOperation.get(answer.operation);
      if (list) list.push(answer);
      else byOperation.set(answer.operation, [answer]);
    }
    tracks.set(agent, byOperation);
  }
  const recorded = [...tracks.keys()];
  const served = new Map<string, number>();

  /** The recorded agent that answers `calling`: the map's, the only one, or the one of the same id. */
  const recordedFor = (calling: string): string | undefined =>
    replay.agent_map[calling] ??
    (recorded.length === 1 ? recorded[0] : tracks.has(calling) ? calling : undefined);

  return {
    /** The recorded agents, and how many answers each has. */
    agents: (): { agent: string; answers: number }[] =>
      Object.entries(replay.agents).map(([agent, answers]) => ({ agent, answers: answers.length })),
    /** The next recorded answer for `calling`'s request to `operation` (used up once taken), if any. */
    take(calling: string, operation: ProtectedEndpointId): TakenAnswer | undefined {
      const agent = recordedFor(calling);
      const list = agent === undefined ? undefined : tracks.get(agent)?.get(operation);
      if (!list || agent === undefined) return undefined;
      const key = `${calling}\u0000${operation}`;
      const index = served.get(key) ?? 0;
      const answer = list[index];
      if (!answer) return undefined;
      served.set(key, index + 1);
      return { answer, agent, index: index + 1, recordedAt: recordedAt + answer.at_ms };
    },
  };
}

export type ReplayTracks = ReturnType<typeof createReplayTracks>;
