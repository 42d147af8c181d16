import { ProblemError } from "@agentplane/problem-details";
import { describe, expect, it } from "vitest";
import { TopLevelMembers } from "../src/proxy/json-members.ts";
import { scanTopLevel } from "../src/proxy/request.ts";

const enc = (s: string) => Buffer.from(s, "utf8");
const NAMES = new Set(["model", "usage", "max_tokens", "inferenceConfig"]);

/** The members kept when `text` arrives split at each of `cuts`. */
function fedIn(text: string, cuts: number[], refuseDuplicates = false) {
  const bytes = enc(text);
  const members = new TopLevelMembers(NAMES, { maxValueBytes: Number.POSITIVE_INFINITY, refuseDuplicates });
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    members.push(bytes.subarray(from, cut));
    from = cut;
  }
  return { complete: members.complete(), result: members.result() };
}

/** What JSON.parse makes of the members kept. */
function expected(text: string): Record<string, unknown> {
  const all = JSON.parse(text) as Record<string, unknown>;
  return Object.fromEntries([...NAMES].filter((k) => k in all).map((k) => [k, all[k]]));
}

const DOCUMENTS = [
  `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"say \\"model\\": \\"x\\" } ] {"}]}`,
  `{"system":"ends in a backslash \\\\","model":"after-backslash","usage":{"input_tokens":3,"nested":[1,{"a":"]"}]}}`,
  `{"system":"\\\\\\"still inside\\\\\\"","model":"m1","max_tokens":1e2}`,
  ` {\n "mod\\u0065l" : "escaped-name" ,\t"max_tokens" : 7 , "inferenceConfig":{"maxTokens":300,"stop":["]}"]}} `,
  `{"tools":[{"input_schema":{"properties":{"model":{"type":"string"}}}}],"model":"日本語","usage":null}`,
  `{"choices":[{"message":{"content":"${"\\\\".repeat(5)}\\"${"x".repeat(300)}"}}],"usage":{"prompt_tokens":1},"model":"last"}`,
  "{}",
  // Escapes on either side of where a string stops being read byte by byte (32 bytes in).
  ...[28, 29, 30, 31, 32, 33].map(
    (pad) => `{"a":"${"x".repeat(pad)}\\\\\\"${"y".repeat(40)}\\\\","model":"z${'\\"'.repeat(20)}"}`,
  ),
];

describe("the top-level member scanner, fed at once or in pieces", () => {
  it("keeps what JSON.parse reads, wherever the chunks are cut", () => {
    for (const text of DOCUMENTS) {
      const want = expected(text);
      expect(scanTopLevel(enc(text), NAMES), text).toEqual(want);
      const length = enc(text).length;
      // Every cut in two, and one byte at a time: names, escapes, strings and brackets split.
      for (let cut = 0; cut <= length; cut++)
        expect(fedIn(text, [cut]).complete, `${text} cut at ${cut}`).toEqual(want);
      const bytewise = Array.from({ length }, (_, i) => i);
      expect(fedIn(text, bytewise).complete, text).toEqual(want);
    }
  });

  it("a document that is not one JSON object is not complete, however it is cut", () => {
    for (const text of [
      "[1,2]",
      '"model"',
      '{"model":"x"',
      '{"model":"x",}',
      '{"model":"x"} trailing',
      '{"messages":[{"a":1]],"model":"x"}',
      '{"model" "x"}',
      '{"model":}',
      '{"model":"unterminated}',
      '{"model":tru}',
      '{"a":"\\\\"}"}',
      '{"mo\\u00zzdel":"x"}',
    ]) {
      expect(scanTopLevel(enc(text), NAMES), text).toBeUndefined();
      for (let cut = 0; cut <= enc(text).length; cut++) expect(fedIn(text, [cut]).complete, text).toBeUndefined();
    }
  });

  it("refuses a member kept that is named twice, also when the names arrive in pieces", () => {
    for (const text of ['{"model":"a","model":"b"}', '{"inferenceConfig":{"maxTokens":1,"maxTokens":100000}}']) {
      for (let cut = 0; cut <= enc(text).length; cut++) {
        expect(() => fedIn(text, [cut], true), text).toThrow(ProblemError);
      }
    }
  });

  it("streaming, keeps the members read before a cut-off end, and drops a value past its size", () => {
    const members = new TopLevelMembers(NAMES, 24);
    members.push(enc(`{"model":"${"m".repeat(40)}","usage":{"output_tokens":2},"choices":[{"text":"cut off`));
    expect(members.result()).toEqual({ usage: { output_tokens: 2 } });
    expect(members.complete()).toBeUndefined();
  });
});
