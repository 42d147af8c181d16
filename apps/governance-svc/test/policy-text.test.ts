import { ProblemError } from "@agentplane/problem-details";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { describe, expect, it } from "vitest";
import { MAX_STATEMENTS_PER_POLICY } from "../src/cedar/complexity.ts";
import { compilePolicyText } from "../src/cedar/policy-text.ts";

function errorsOf(text: string): string[] {
  try {
    compilePolicyText(text);
  } catch (err) {
    if (err instanceof ProblemError) return (err.toBody().errors as { message: string }[]).map((e) => e.message);
    throw err;
  }
  throw new Error("the policy compiled");
}

describe("Cedar schema errors name the statement as its author wrote it", () => {
  it("names a statement by its @id, or by its position when it has none, never policy0", () => {
    const messages = errorsOf(
      [
        `@id("allow-exec") permit(principal, action == Action::"sandbox:exec", resource);`,
        `@id("bad-rule") permit(principal, action == Action::"no-such-action", resource);`,
        `permit(principal, action == Action::"another-unknown", resource);`,
      ].join("\n"),
    );
    expect(messages).toHaveLength(2);
    expect(messages[0]).toContain('statement @id("bad-rule")');
    expect(messages[0]).toMatch(/^line 2, column \d+:/);
    expect(messages[1]).toContain("statement #3 (no @id)");
    for (const message of messages) expect(message).not.toMatch(/policy\d/);
  });
});

describe("Cedar syntax errors name the statement they are in", () => {
  it("names it by its @id, past strings and comments holding ';', or by its position", () => {
    const [named] = errorsOf(
      [
        `@id("ok") permit(principal, action == Action::"sandbox:exec", resource) when { context.program == "a;b" };`,
        `// a comment; with a semicolon`,
        `@id("broken-one")`,
        `permit(principal, action == Action::"sandbox:exec", resource) when { context.program == };`,
      ].join("\n"),
    );
    expect(named).toMatch(/^line 4, column \d+: in statement @id\("broken-one"\): /);
    const [unnamed] = errorsOf(
      `@id("ok") permit(principal, action, resource);\npermit(principal, action, resource) when { 1 + };`,
    );
    expect(unnamed).toMatch(/^line 2, column \d+: in statement #2 \(no @id\): /);
  });
});

describe("a body too complex for Cedar is refused before Cedar sees it", () => {
  const when = (condition: string) =>
    `permit(principal, action == Action::"sandbox:exec", resource) when { ${condition} };`;
  const ok = when(`context.program == "git"`);

  it("answers 400 naming the line, and the engine keeps compiling and deciding afterwards", () => {
    const hostile = [
      when(`${"(".repeat(5000)}true${")".repeat(5000)}`),
      when(`${"true && ".repeat(20_000)}true`),
      when(`${"if true then ".repeat(800)}true${" else false".repeat(800)}`),
      when(`${"[".repeat(200)}${"]".repeat(200)} == []`),
      when(`[1]${".contains(1)".repeat(1600)}`),
      when(`${"1 + ".repeat(1600)}1 == 2`),
    ];
    for (const text of hostile) {
      let caught: unknown;
      try {
        compilePolicyText(text);
      } catch (err) {
        caught = err;
      }
      expect(caught, text.slice(0, 80)).toBeInstanceOf(ProblemError);
      const problem = caught as ProblemError;
      expect(problem.status).toBe(400);
      expect((problem.toBody().errors as { message: string }[])[0]?.message).toMatch(
        /^line 1, column \d+: (brackets nest deeper than 32 levels|statement #1 has more than 256 operators)$/,
      );
    }
    // Cedar overflowing once breaks it for every later call in the process; it must still work.
    expect(compilePolicyText(ok)).toHaveLength(1);
  });

  it("accepts a body at the bounds, and Cedar evaluates it", () => {
    const text = when(
      `${"(".repeat(30)}${"if true then ".repeat(250)}true${" else false".repeat(250)}${")".repeat(30)}`,
    );
    expect(compilePolicyText(text)).toHaveLength(1);
    const answer = cedar.isAuthorized({
      principal: { type: "User", id: "u" },
      action: { type: "Action", id: "sandbox:exec" },
      resource: { type: "Sandbox", id: "s" },
      context: {},
      policies: { staticPolicies: text },
      entities: [],
    });
    expect(answer.type, JSON.stringify(answer)).toBe("success");
    expect(compilePolicyText(ok)).toHaveLength(1);
  });

  it("refuses a body of more statements than the bound, and compiles one at the bound", () => {
    // Compiling takes the event loop about a millisecond per statement: 7,000 tiny statements in
    // 256 KiB held every tenant's decisions for ten seconds.
    const tiny = `permit(principal, action, resource);\n`;
    const flood = tiny.repeat(Math.floor((256 * 1024) / tiny.length));
    let caught: unknown;
    try {
      compilePolicyText(flood);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ProblemError);
    const problem = (caught as ProblemError).toBody();
    expect(problem.status).toBe(400);
    expect((problem.errors as { message: string }[])[0]?.message).toBe(
      `line ${MAX_STATEMENTS_PER_POLICY + 1}, column 36: a policy holds at most ${MAX_STATEMENTS_PER_POLICY} statements`,
    );
    expect(compilePolicyText(tiny.repeat(MAX_STATEMENTS_PER_POLICY))).toHaveLength(MAX_STATEMENTS_PER_POLICY);
  });

  it("does not count brackets or operators inside strings and comments", () => {
    const text = `// ${"(".repeat(100)} && ${"&& ".repeat(300)}\n${when(`context.program == "${"(".repeat(100)}${"&&".repeat(300)}"`)}`;
    expect(compilePolicyText(text)).toHaveLength(1);
  });
});
