import { ProblemError } from "@agentplane/problem-details";
import { describe, expect, it } from "vitest";
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
