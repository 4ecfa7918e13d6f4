/** The suite could not do its job: target unreachable, token command failed, nothing to run (exit 2). */
export class CannotRunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CannotRunError';
  }
}
