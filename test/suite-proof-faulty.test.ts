import { FAULTY_GATEWAYS } from './gateways/faulty-gateways.ts';
import { proveFaulty } from './support/prove-faulty.ts';

/*
 * Every faulty gateway, each on the virtual clock it shares with the suite (test/gateways/virtual-clock.ts):
 * its waits take no real time, so the file costs its CPU time only and no verdict moves with load. Real time
 * is proven by test/conformance-reference.test.ts and the CLI tests, which run the suite as users do.
 */
proveFaulty('the conformance suite fails every faulty gateway, on the broken rule', FAULTY_GATEWAYS);
