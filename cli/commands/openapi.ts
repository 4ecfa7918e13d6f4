import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { baseUrlOption, CliError } from '../cli-options.ts';

interface OpenApiCommandOptions {
  out?: string;
  serverUrl: string;
  admin: boolean;
  identityProvider: boolean;
  config?: string;
}

/**
 * `agent-gateway openapi`: the OpenAPI 3.1 document of the reference profile (the spec's four endpoints, the
 * identity provider, the admin API), generated from the schemas that validate the bodies. What a running
 * gateway serves at /openapi.json, for Prism, code generators and API tools offline.
 */
export function registerOpenApiCommand(program: Command) {
  program
    .command('openapi')
    .description('print (or write) the OpenAPI 3.1 document of the reference gateway')
    .option('--out <file>', 'write it to this file instead of stdout')
    .option('--server-url <url>', 'the server URL the document names', baseUrlOption, 'http://127.0.0.1:8787')
    .option('--no-admin', 'leave the admin API out (a gateway without --admin-key does not serve it)')
    .option('--no-identity-provider', 'leave the simulated identity provider out')
    .option('--config <file>', "a gateway config: its extra tools' routes are described too")
    .addHelpText(
      'after',
      '\nExample:\n  npx --no-install agent-gateway openapi --out openapi.json\n  npx redocly lint openapi.json   # or feed it to a code generator or a mock server\n',
    )
    .action(async (options: OpenApiCommandOptions) => {
      // zod and the schemas load here, not at start.
      const { createOpenApiDocument } = await import('../../mock-server/openapi/document.ts');
      const document = createOpenApiDocument({
        serverUrl: options.serverUrl,
        admin: options.admin,
        identityProvider: options.identityProvider,
        extraTools: options.config === undefined ? [] : await extraToolRoutesOf(options.config),
      });
      const text = `${JSON.stringify(document, null, 2)}\n`;
      if (!options.out) {
        process.stdout.write(text);
        return;
      }
      const path = resolve(options.out);
      try {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, text);
      } catch (error) {
        throw new CliError(`Cannot write ${path}: ${(error as Error).message}`);
      }
      process.stderr.write(`agent-gateway: wrote the OpenAPI 3.1 document to ${path}\n`);
    });
}

/** The routes of the extra tools a config file declares (its fixtures read, as `serve` would). */
async function extraToolRoutesOf(file: string) {
  const { loadConfig, readYamlFile } = await import('../../mock-server/config/load-config.ts');
  const { toolDefinitions } = await import('../../mock-server/tools/index.ts');
  const { extraToolRoutes } = await import('../../mock-server/routes/tool-routes.ts');
  const config = loadConfig({ file });
  return extraToolRoutes(toolDefinitions(config.tools, readYamlFile));
}
