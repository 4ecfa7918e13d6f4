import type { GatewayError } from '../../mock-server/errors.ts';

/** The catalogue code of the GatewayError `fn` throws, or 'no error' when it returns. */
export const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as GatewayError).code;
  }
  return 'no error';
};
