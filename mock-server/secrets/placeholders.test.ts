import { describe, expect, it } from 'vitest';
import { createSecretScanner } from './secrets.ts';

const scan = createSecretScanner({ version: () => 1, keys: () => [], canaries: [] });
const JWT_IO =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';

describe('documentation placeholders are not secrets', () => {
  it('AWS example keys, jwt.io’s sample and filler keys pass; real-shaped ones are still found', () => {
    for (const text of [
      'AKIAIOSFODNN7EXAMPLE access denied',
      'aws configure AKIAI44QH8DHBEXAMPLE',
      `decode ${JWT_IO}`,
      'ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx invalid',
    ])
      expect(scan(text, {}).kinds, text).toEqual([]);
    expect(scan('key AKIAQ3EGUKJZ4XKRT7PB', {}).kinds).toEqual(['aws_access_key']);
    expect(scan('ghp_Zx8Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8Lz0Xc9V', {}).kinds).toEqual(['github_token']);
    expect(scan(`${JWT_IO.slice(0, -5)}AbCdE`, {}).kinds).toEqual(['jwt']);
  });
});
