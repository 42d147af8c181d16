import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { Io } from "../src/context.ts";
import { printResult, type Shape } from "../src/output.ts";
import { stream } from "./harness.ts";

// Ids as the platform makes them: a prefix and 26 characters.
const id = (prefix: string, n: number) => `${prefix}_06h2gfgca4zrsefxdc6z99n${String(n).padStart(3, "0")}`;
const rows = [1, 2, 3].map((n) => ({
  id: id("sbx", n),
  name: `build-runner-${n}`,
  state: "running",
  orgId: id("org", n),
  projectId: id("prj", n),
  userId: id("usr", n),
}));
const COLUMNS = ["id", "name", "state", "orgId", "projectId", "userId"];

async function print(
  data: unknown,
  columns: number,
  options: { tty?: boolean; json?: boolean; shape?: Shape } = {},
): Promise<string> {
  const io: Io = {
    env: {},
    stdin: new PassThrough() as unknown as NodeJS.ReadStream,
    stdout: stream(options.tty ?? true, columns),
    stderr: stream(false),
  };
  await printResult(io, data, options.json ? { json: true } : {}, options.shape ?? { fields: COLUMNS, list: true });
  await new Promise((r) => setImmediate(r));
  return (io.stdout as unknown as { text(): string }).text();
}
const lines = (text: string) => text.trimEnd().split("\n");
const words = (line: string) => line.trim().split(/\s{2,}/);

describe("tables on a terminal narrower than they are", () => {
  it("keeps every id whole at 80 columns, leaving columns out from the right", async () => {
    const out = await print(rows, 80);
    const [head, ...body] = lines(out);
    expect(words(head!)).toEqual(["ID", "NAME", "STATE"]);
    for (const [i, line] of body.entries()) expect(words(line)).toEqual([rows[i]!.id, rows[i]!.name, "running"]);
    expect(out).not.toContain("…");
    expect(Math.max(...lines(out).map((l) => l.length))).toBeLessThanOrEqual(80);
    // A little wider, the next column from the left comes back first.
    expect(words(lines(await print(rows, 100))[0]!)).toEqual(["ID", "NAME", "STATE", "ORG ID"]);
  });

  it("shows every column, whole, on a wide terminal", async () => {
    const [head, ...body] = lines(await print(rows, 200));
    expect(words(head!)).toEqual(["ID", "NAME", "STATE", "ORG ID", "PROJECT ID", "USER ID"]);
    expect(words(body[0]!)).toEqual(Object.values(rows[0]!));
  });

  it("cuts a free-text column short only when it is the last one left to give way", async () => {
    const text = "Runs the nightly build of every service, then publishes the images to the registry";
    const described = rows.map((r) => ({ id: r.id, name: r.name, description: text, state: r.state }));
    const columns = ["id", "name", "description", "state"];
    const io = (width: number) => print(described, width, { shape: { fields: columns, list: true, columns } });
    const narrow = await io(80);
    const [head, first] = lines(narrow);
    expect(words(head!)).toEqual(["ID", "NAME", "DESCRIPTION"]);
    expect(first).toMatch(new RegExp(`^${rows[0]!.id} +build-runner-1 +Runs the nightly[^…]*…$`));
    expect(Math.max(...lines(narrow).map((l) => l.length))).toBeLessThanOrEqual(80);
    // Too narrow for a useful part of it: the description is left out too, the ids still whole.
    expect(words(lines(await io(60))[1]!)).toEqual([rows[0]!.id, "build-runner-1"]);
    // Ids and names stay whole even where they alone are wider than the terminal.
    expect(words(lines(await io(30))[1]!)).toEqual([rows[0]!.id, "build-runner-1"]);
    expect(words(lines(await io(200))[1]!)).toEqual([rows[0]!.id, "build-runner-1", text, "running"]);
  });

  it("leaves pipes and --json as they were: every column, nothing cut", async () => {
    const piped = lines(await print(rows, 80, { tty: false }));
    expect(piped[0]!.split("\t")).toEqual(Object.values(rows[0]!));
    expect(piped).toHaveLength(3);
    expect(JSON.parse(await print(rows, 80, { json: true }))).toEqual(rows);
  });
});
