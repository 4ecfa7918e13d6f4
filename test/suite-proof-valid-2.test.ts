import { VALID_VARIANTS } from './gateways/valid-variants.ts';
import { part } from './support/proof.ts';
import { proveValid } from './support/prove-valid.ts';

proveValid(
  'the conformance suite passes every valid variant with --strict, no false failures (part 2 of 2)',
  part(VALID_VARIANTS, 1, 2),
);
