import { describe, expect, it } from "vitest";
import { runtimeLogger } from "../src/logger.ts";

describe("the runtime's logger", () => {
  it("writes credentials as [redacted] wherever a logged object carries them", () => {
    const lines: string[] = [];
    const logger = runtimeLogger("info", { write: (line: string) => lines.push(line) });
    logger.warn(
      {
        headers: { authorization: "Bearer s3cret-bearer", "x-api-key": "s3cret-key", cookie: "sid=s3cret-cookie" },
        token: "s3cret-token",
        subscription: { name: "ci", secret: "s3cret-webhook" },
        keep: "visible",
      },
      "a call failed",
    );
    const line = lines.join("");
    expect(line).not.toMatch(/s3cret/);
    expect(line).toContain("[redacted]");
    expect(JSON.parse(line)).toMatchObject({ keep: "visible", msg: "a call failed", name: "agent-runtime" });
  });
});
