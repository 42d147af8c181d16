import { describe, expect, it } from "vitest";
import { runJq } from "../src/output.ts";

const failure = (data: unknown, expression: string) =>
  runJq(data, expression).then(
    () => "",
    (err: Error) => err.message,
  );

describe("--jq errors", () => {
  it("name the expression that does not compile, not a location line without it", async () => {
    expect(await failure([], ".[0")).toBe('--jq: syntax error, unexpected end of file in ".[0"');
    expect(await failure([], "nosuchfn")).toBe('--jq: nosuchfn/0 is not defined in "nosuchfn"');
  });

  it("say what went wrong on the data without jq-web's input name", async () => {
    expect(await failure([{ a: 1 }], ".a.b")).toBe('--jq: Cannot index array with string "a"');
    expect(await runJq([{ a: 1 }], ".[0].a")).toBe("1");
  });
});
