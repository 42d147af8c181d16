import { ProblemError } from "@agentplane/problem-details";
import { describe, expect, it } from "vitest";
import { analyzeRequest } from "../src/proxy/request.ts";
import { checkTierHeaders } from "../src/proxy/service-tier.ts";
import type { Upstream } from "../src/proxy/target.ts";

const converse: Upstream = {
  url: new URL("http://127.0.0.1:9/x"),
  origin: "http://127.0.0.1:9",
  path: "/x",
  auth: { kind: "header", name: "authorization", value: "Bearer k" },
  api: "converse",
  modelFromPath: "anthropic.claude-haiku-4-5",
  streamingPath: false,
};

/** The status of the refusal, or "forwarded". */
function outcome(run: () => unknown): number | string {
  try {
    run();
    return "forwarded";
  } catch (err) {
    return err instanceof ProblemError ? err.status : String(err);
  }
}
const body = (b: unknown) => () =>
  analyzeRequest(converse, "model/anthropic.claude-haiku-4-5/converse", new TextEncoder().encode(JSON.stringify(b)));
const messages = [{ role: "user", content: [{ text: "hi" }] }];

describe("Bedrock guardrails, billed beside the tokens", () => {
  it("a guardrail named in a Converse body or an invoke header is a 400, never forwarded", () => {
    const guardrailConfig = { guardrailIdentifier: "gr-other-tenant", guardrailVersion: "1" };
    expect(outcome(body({ messages, guardrailConfig }))).toBe(400);
    expect(outcome(body({ messages, guardrailConfig: { ...guardrailConfig, streamProcessingMode: "async" } }))).toBe(
      400,
    );
    expect(
      outcome(() =>
        checkTierHeaders(
          new Headers({
            "X-Amzn-Bedrock-GuardrailIdentifier": "gr-other-tenant",
            "X-Amzn-Bedrock-GuardrailVersion": "1",
          }),
        ),
      ),
    ).toBe(400);
    // In other letter case, a provider matching names without regard to case would read it.
    expect(outcome(() => analyzeRequest(converse, "x", new TextEncoder().encode('{"GuardrailConfig":{}}')))).toBe(400);
  });

  it("a call without one goes through", () => {
    expect(outcome(body({ messages, inferenceConfig: { maxTokens: 16 } }))).toBe("forwarded");
    expect(outcome(() => checkTierHeaders(new Headers({ "x-amzn-bedrock-trace": "DISABLED" })))).toBe("forwarded");
  });
});
