// Writes docs/cli/ from the command tree: an index, and per noun every command's `--help` exactly
// as the CLI prints it (the golden files of the help texts). `--check` fails when they differ.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderDocs } from "../src/docs.ts";

const out = fileURLToPath(new URL("../../../docs/cli/", import.meta.url));
const files = renderDocs();

if (process.argv.includes("--check")) {
  const present = readdirSync(out).filter((f) => f.endsWith(".md"));
  const stale = Object.keys(files).filter((name) => {
    try {
      return readFileSync(join(out, name), "utf8") !== files[name];
    } catch {
      return true;
    }
  });
  const extra = present.filter((f) => !(f in files));
  if (stale.length || extra.length) {
    console.error(
      `docs/cli is out of date (${[...stale, ...extra].join(", ")}): run npm run cli:docs and commit the result`,
    );
    process.exit(1);
  }
  console.log("docs/cli matches the command tree");
} else {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(out, name), text);
  console.log(`wrote ${Object.keys(files).length} files to docs/cli`);
}
