import { FAULTY_GATEWAYS } from './gateways/faulty-gateways.ts';
import { part } from './support/proof.ts';
import { proveFaulty } from './support/prove-faulty.ts';

proveFaulty(
  'the conformance suite fails every faulty gateway, on the broken rule (part 3 of 3)',
  part(FAULTY_GATEWAYS, 2, 3),
);
