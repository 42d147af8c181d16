import { describe, expect, it } from "vitest";
import { isConnectionLost } from "../src/lib/connection.ts";
import { parseEndpoints } from "../src/lib/endpoints.ts";
import { formatLabels, parseLabels } from "../src/lib/labels.ts";
import { ApiError } from "../src/lib/problem.ts";
import { fieldOfPointer, schemaFields, toArguments } from "../src/lib/schema-form.ts";
import { formatThresholds, parseAmount, parseThresholds, usd, usedPercent } from "../src/lib/spend.ts";
import { groupRows, readDays, usageWindow } from "../src/lib/usage-window.ts";

describe("the tool-call form from an input schema", () => {
  const schema = {
    type: "object",
    properties: {
      text: { type: "string", description: "What to echo" },
      count: { type: "integer" },
      ratio: { type: ["number", "null"] },
      loud: { type: "boolean" },
      mode: { type: "string", enum: ["a", "b"] },
      tags: { type: "array", items: { type: "string" } },
    },
    required: ["text", "count"],
  };
  const fields = schemaFields(schema);

  it("makes one typed field per property, required ones marked", () => {
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ["text", "string", true],
      ["count", "integer", true],
      ["ratio", "number", false],
      ["loud", "boolean", false],
      ["mode", "enum", false],
      ["tags", "json", false],
    ]);
    expect(fields[0]?.description).toBe("What to echo");
    expect(fields[4]?.options).toEqual(["a", "b"]);
    expect(schemaFields(undefined)).toEqual([]);
  });

  it("turns the typed values into arguments, leaving out empty optional fields", () => {
    const result = toArguments(fields, { text: " hi ", count: "3", ratio: "", loud: true, mode: "b", tags: '["x"]' });
    expect(result).toEqual({ arguments: { text: " hi ", count: 3, loud: true, mode: "b", tags: ["x"] }, errors: {} });
  });

  it("names each field it cannot read", () => {
    const result = toArguments(fields, { text: "", count: "2.5", ratio: "many", mode: "c", tags: "[" });
    expect(result.errors).toEqual({
      text: "Required",
      count: "A whole number",
      ratio: "A number",
      mode: "One of a, b",
      tags: "Not valid JSON",
    });
  });

  it("finds the field an API error pointer names", () => {
    expect(fieldOfPointer("/body/arguments/text", "arguments")).toBe("text");
    expect(fieldOfPointer("/arguments/a~1b", "arguments")).toBe("a/b");
    expect(fieldOfPointer("/body/name", "arguments")).toBeUndefined();
    expect(fieldOfPointer("/body/arguments", "arguments")).toBeUndefined();
  });
});

describe("spending limits as people read and type them", () => {
  it("parses thresholds as whole, distinct percentages", () => {
    expect(parseThresholds("80, 50 100%")).toEqual({ thresholds: [50, 80, 100] });
    expect(parseThresholds("50,50")).toEqual({ thresholds: [50] });
    expect(parseThresholds("")).toEqual({ thresholds: [] });
    expect(parseThresholds("0.5").error).toMatch(/Whole percentages/);
    expect(parseThresholds("120").error).toMatch(/1 to 100/);
    expect(parseThresholds("1 2 3 4 5 6 7 8 9 10 11").error).toMatch(/At most 10/);
    expect(formatThresholds([50, 80])).toBe("50, 80");
  });
  it("parses amounts and formats dollars", () => {
    expect(parseAmount("$12.345")).toEqual({ amount: 12.35 });
    expect(parseAmount("0")).toEqual({ amount: 0 });
    expect(parseAmount("0.004").error).toBe("At least $0.01 (0 refuses every model call)");
    expect(parseAmount("0.005")).toEqual({ amount: 0.01 });
    expect(parseAmount("-1").error).toBeDefined();
    expect(parseAmount("").error).toBeDefined();
    expect(usd(1234.5)).toBe("$1,234.50");
    expect(usd(0.0123)).toBe("$0.0123");
  });
  it("counts reserved spend as used and caps at 100", () => {
    expect(usedPercent({ limitUsd: 100, spentUsd: 40, reservedUsd: 10 })).toBe(50);
    expect(usedPercent({ limitUsd: 100, spentUsd: 140, reservedUsd: 0 })).toBe(100);
    expect(usedPercent({ limitUsd: 0, spentUsd: 0, reservedUsd: 0 })).toBe(100);
  });
});

describe("the usage window and chart rows", () => {
  const now = Date.parse("2026-03-10T15:30:00.000Z");
  it("covers whole UTC days ending today", () => {
    expect(usageWindow(7, now)).toEqual({ from: "2026-03-04T00:00:00.000Z", to: "2026-03-11T00:00:00.000Z" });
    expect(usageWindow(30, now).from).toBe("2026-02-09T00:00:00.000Z");
    expect(readDays("90")).toBe(90);
    expect(readDays("13")).toBe(30);
    expect(readDays(null)).toBe(30);
  });
  it("names groups, largest first, and folds the rest into one row", () => {
    const groups = [
      { key: "prj_a", costUsd: 1, requests: 1 },
      { key: null, costUsd: 5, requests: 2 },
      { key: "prj_b", costUsd: 3, requests: 3 },
      { key: "prj_c", costUsd: 2, requests: 4 },
    ];
    expect(groupRows(groups, { prj_b: "web" }, 2)).toEqual([
      { label: "(none)", costUsd: 5, requests: 2 },
      { label: "web", costUsd: 3, requests: 3 },
      { label: "2 more", costUsd: 3, requests: 5 },
    ]);
  });
});

describe("a lost connection", () => {
  it("is a failed fetch, an unloadable chunk or a bare gateway error; not an answer of the API", () => {
    expect(isConnectionLost(new TypeError("Failed to fetch"))).toBe(true);
    expect(isConnectionLost(new Error("Failed to fetch dynamically imported module: /assets/x.js"))).toBe(true);
    expect(isConnectionLost(new ApiError(502, { status: 502, title: "Bad Gateway" }))).toBe(true);
    expect(isConnectionLost(new ApiError(502, { type: "https://agentplane.dev/problems/upstream-failed" }))).toBe(
      false,
    );
    expect(isConnectionLost(new ApiError(403, { type: "https://agentplane.dev/problems/policy-denied" }))).toBe(false);
    expect(isConnectionLost(new Error("boom"))).toBe(false);
  });
});

describe("AWS endpoint overrides", () => {
  it("reads service=url lines and refuses anything else", () => {
    expect(parseEndpoints(" sts = http://127.0.0.1:9/ \n\nS3=https://s3.internal")).toEqual({
      endpoints: { sts: "http://127.0.0.1:9/", s3: "https://s3.internal" },
    });
    expect(parseEndpoints("")).toEqual({ endpoints: {} });
    expect(parseEndpoints("sts http://x").error).toMatch(/service=url/);
    expect(parseEndpoints("sts=not a url").error).toMatch(/service=url|not a URL/);
  });
});

describe("labels typed as key=value lines", () => {
  it("reads them back from the text they are shown as", () => {
    const labels = { tier: "edge", team: "ml", "app.kubernetes.io/name": "a=b" };
    const text = formatLabels(labels);
    expect(text.split("\n")[0]).toBe("app.kubernetes.io/name=a=b");
    expect(parseLabels(text)).toEqual({ labels });
    expect(parseLabels("\n  team = ml \n\n")).toEqual({ labels: { team: "ml" } });
    expect(formatLabels(undefined)).toBe("");
  });

  it("names the line it cannot read and a key given twice", () => {
    expect(parseLabels("team=ml\nnot a line").error).toBe('"not a line": write key=value, one per line');
    expect(parseLabels("=x").error).toContain("write key=value");
    expect(parseLabels("team=a\nteam=b").error).toBe('"team" is given twice');
  });

  it("shows what the API said of one label beside the labels field", () => {
    const error = new ApiError(400, {
      errors: [
        { pointer: "/body/labels/bad key!", message: "a label key" },
        { pointer: "/body/name", message: "Too small" },
      ],
    });
    expect(error.fieldError("labels")).toBe("a label key");
    expect(error.fieldError("name")).toBe("Too small");
    expect(error.fieldError("label")).toBeUndefined();
  });
});
