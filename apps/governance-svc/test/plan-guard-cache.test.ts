import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { statementGuard } from "../src/engine/plan.ts";

describe("the guards memoized by statement text", () => {
  it("are found, and keep a bounded size of texts however many versions come and go", () => {
    expect(
      statementGuard(`permit(principal, action, resource) when { context.program == "git" && context.tty };`),
    ).toEqual({ attr: "program", values: ["sgit"] });
    expect(statementGuard(`permit(principal, action, resource) when { context.tty };`)).toBeUndefined();

    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    // A statement can be most of a 256 KiB body; each new policy version brings new texts.
    const filler = "x".repeat(200_000);
    for (let i = 0; i < 300; i++) {
      const text = `forbid(principal, action, resource) when { context.program == "${i}${filler}" };`;
      expect(statementGuard(text)?.attr).toBe("program");
    }
    gc();
    // Unbounded, the 300 texts stayed: 120 MB of heap. The bound is 16 Mi characters.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(50_000_000);
  });
});
