import { buildOpenApiDocument, CREDENTIAL_FIELDS } from "@agentplane/contracts";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS, DERIVED } from "../src/command-map.ts";
import { buildProgram } from "../src/program.ts";
import { runInProcess } from "./harness.ts";

function paths(cmd: Command, prefix: string[] = []): string[] {
  return cmd.commands.flatMap((c) => {
    const here = [...prefix, c.name()];
    return [here.join(" "), ...paths(c, here)];
  });
}

describe("every OpenAPI operation is reachable from the command line", () => {
  const doc = buildOpenApiDocument();
  const operations: string[] = [];
  for (const item of Object.values<Record<string, { operationId: string }>>(doc.paths)) {
    for (const op of Object.values(item)) operations.push(op.operationId);
  }
  const { stdout, stderr } = { stdout: process.stdout, stderr: process.stderr };
  const program = buildProgram({ env: {}, stdin: process.stdin, stdout, stderr });
  const commands = new Set(paths(program));

  it("maps every operation of the document to a command that exists", () => {
    const unmapped = operations.filter((id) => !COMMANDS[id]);
    expect(unmapped, "operations without a command: add them to apps/cli/src/command-map.ts").toEqual([]);
    const missing = operations.filter((id) => COMMANDS[id] && !commands.has(COMMANDS[id]));
    expect(missing, "mapped to a command the tree does not have").toEqual([]);
  });

  it("has no command for an operation that is gone", () => {
    const gone = Object.keys(COMMANDS).filter((id) => !operations.includes(id));
    expect(gone, "remove these from apps/cli/src/command-map.ts").toEqual([]);
    for (const [command, id] of Object.entries(DERIVED)) {
      expect(commands.has(command), command).toBe(true);
      expect(operations, `${command} reads ${id}`).toContain(id);
    }
  });

  it("describes every command and every id argument in its help", () => {
    const silent: string[] = [];
    const bare: string[] = [];
    const visit = (cmd: Command, prefix: string[]) => {
      for (const c of cmd.commands) {
        const here = [...prefix, c.name()];
        if (c.name() !== "__complete" && !c.description()) silent.push(here.join(" "));
        for (const a of c.registeredArguments) {
          if (["sandbox", "project", "org", "policy", "cluster", "team"].includes(a.name()) && !a.description)
            bare.push(`${here.join(" ")} <${a.name()}>`);
        }
        visit(c, here);
      }
    };
    visit(program, []);
    expect(silent, "commands whose help line is empty: describe them in NOUNS").toEqual([]);
    expect(bare, "id arguments without a description").toEqual([]);
  });

  it("describes every flag by what it takes, not by its own name", () => {
    const undescribed: string[] = [];
    const visit = (cmd: Command, prefix: string[]) => {
      for (const c of cmd.commands) {
        const here = [...prefix, c.name()];
        for (const o of c.options) {
          const name = o.long?.replace(/^--/, "") ?? "";
          if (!o.description || o.description.replace(/ \(required\)$/, "").toLowerCase() === name)
            undescribed.push(`${here.join(" ")} ${o.long}`);
        }
        visit(c, here);
      }
    };
    visit(program, []);
    expect(undescribed, "give these a description in the contracts").toEqual([]);
  });

  it("says a time flag takes RFC 3339, so a bare date is not a surprise", () => {
    // biome-ignore lint/suspicious/noExplicitAny: walking the generated document
    const schemas = (doc as any).components.schemas as Record<string, any>;
    // biome-ignore lint/suspicious/noExplicitAny: walking the generated document
    const resolve = (s: any) => (s?.$ref ? schemas[String(s.$ref).split("/").pop()!] : s);
    const silent: string[] = [];
    // biome-ignore lint/suspicious/noExplicitAny: walking the generated document
    for (const item of Object.values<Record<string, any>>(doc.paths)) {
      for (const op of Object.values(item)) {
        for (const p of op.parameters ?? []) {
          const schema = resolve(p.schema);
          // A cursor is the previous page's nextCursor, handed back as is.
          if (
            p.in === "query" &&
            p.name !== "cursor" &&
            schema?.format === "date-time" &&
            !/RFC 3339/.test(p.description ?? schema.description ?? "")
          )
            silent.push(`${op.operationId} ?${p.name}`);
        }
        const body = resolve(op.requestBody?.content?.["application/json"]?.schema);
        // biome-ignore lint/suspicious/noExplicitAny: walking the generated document
        for (const [name, prop] of Object.entries<any>(body?.properties ?? {})) {
          if (
            resolve(prop)?.format === "date-time" &&
            !/RFC 3339/.test(prop.description ?? resolve(prop).description ?? "")
          )
            silent.push(`${op.operationId} .${name}`);
        }
      }
    }
    expect(silent, "describe these as RFC 3339 times").toEqual([]);
  });

  it("lists every credential kind's fields, as governance takes them, in the credentials help", async () => {
    for (const verb of ["create", "update"]) {
      const help = await runInProcess(["credentials", verb, "--help"], {});
      for (const [kind, fields] of Object.entries(CREDENTIAL_FIELDS)) {
        const mark = (f: string) => `${f}${fields.secret.includes(f) ? "*" : ""}`;
        const line = [...fields.required.map(mark), ...fields.optional.map((f) => `[${mark(f)}]`)].join(", ");
        expect(help.stdout, `credentials ${verb} --help, kind ${kind}`).toContain(`  ${kind.padEnd(16)}${line}\n`);
      }
    }
  });

  it("answers an unknown command or flag with one line naming the closest match, exit 1", async () => {
    const unknown = await runInProcess(["orgs", "lsit"], {});
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("error: unknown command 'lsit' (did you mean list?)\n");
    const flag = await runInProcess(["orgs", "list", "--limt", "3"], {});
    expect(flag.code).toBe(1);
    expect(flag.stderr).toBe("error: unknown option '--limt' (did you mean --limit?)\n");
  });

  it("documents the exit codes", async () => {
    const help = await runInProcess(["help", "exit-codes"], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/4\s+authentication needed/);
    expect(help.stdout).toMatch(/3\s+not found or denied/);
  });
});
