import { describe, expect, it } from "vitest";
import { ResourceName } from "../src/common/schemas.ts";

describe("resource names", () => {
  it("keep what people type, without the spaces around it", () => {
    expect(ResourceName.parse("  Acme Platform  ")).toBe("Acme Platform");
    expect(ResourceName.parse("Équipe données — prod 🚀")).toBe("Équipe données — prod 🚀");
    expect(ResourceName.parse("مشروع")).toBe("مشروع");
  });

  it("refuse control and bidirectional formatting characters, which disguise a name where it is shown", () => {
    for (const hidden of [
      "\u202e",
      "\u202a",
      "\u2066",
      "\u2069",
      "\u200f",
      "\u200e",
      "\u061c",
      "\u001b",
      "\u007f",
      "\u0085",
      "\n",
    ]) {
      const result = ResourceName.safeParse(`Acme${hidden}gnp.exe`);
      expect(result.success, JSON.stringify(hidden)).toBe(false);
      expect(result.error?.issues[0]?.message).toContain("bidirectional formatting");
    }
  });
});
