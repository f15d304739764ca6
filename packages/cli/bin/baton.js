#!/usr/bin/env node
// The `baton` command. This file is committed (dist/bin.js is not), so installing the workspace
// links the bin before anything is built, without pnpm's "Failed to create bin" warning.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = new URL('../dist/bin.js', import.meta.url);
if (existsSync(fileURLToPath(built))) {
  await import(built.href);
} else {
  process.stderr.write(
    'baton: @baton/cli is not built. In the Baton repository, run `pnpm baton …` (from source) or `pnpm build` first.\n',
  );
  process.exitCode = 1;
}
