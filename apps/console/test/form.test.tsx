import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import {
  formLevelError,
  RadioField,
  RoleField,
  RoleSelect,
  SelectField,
  TextAreaField,
} from "../src/components/form.tsx";
import { ApiError } from "../src/lib/problem.ts";

const options = (html: string) => [...html.matchAll(/<option value="([^"]*)"/g)].map((m) => m[1]);

describe("the form kit", () => {
  it("offers the given roles, and keeps a current role that is not among them first", () => {
    const roles = ["admin", "member", "viewer"] as const;
    const mine = renderToStaticMarkup(
      <RoleSelect aria-label="Role of Ada" roles={roles} value="member" onChange={() => {}} />,
    );
    expect(options(mine)).toEqual(["admin", "member", "viewer"]);
    expect(mine).toContain('aria-label="Role of Ada"');
    const above = renderToStaticMarkup(
      <RoleSelect aria-label="Role of Bo" roles={roles} value="owner" onChange={() => {}} />,
    );
    expect(options(above)).toEqual(["owner", "admin", "member", "viewer"]);
  });

  it("labels a role field and puts the API's message for it beside it, announced with it", () => {
    const html = renderToStaticMarkup(
      <RoleField label="Role" roles={["viewer"]} value="viewer" onChange={() => {}} error="Above your own role" />,
    );
    const id = /<label for="([^"]+)"/.exec(html)?.[1];
    expect(id).toBeTruthy();
    expect(html).toContain(`<select id="${id}" aria-describedby="${id}-note" aria-invalid="true"`);
    expect(html).toContain(`<span id="${id}-note" aria-live="polite" class="text-xs empty:-mt-1 text-red-700`);
    expect(html).toContain("Above your own role");
    const hinted = renderToStaticMarkup(
      <RoleField label="Role" roles={["viewer"]} value="viewer" onChange={() => {}} hint="At most your own role" />,
    );
    expect(hinted).not.toContain("aria-invalid");
    expect(hinted).toContain("At most your own role");
  });

  it("leaves a problem that names fields to those fields, and shows any other error below the form", () => {
    const named = new ApiError(400, { detail: "Invalid", errors: [{ pointer: "/body/name", message: "Required" }] });
    const unnamed = new ApiError(409, { detail: "Name taken" });
    expect(formLevelError(named)).toBeUndefined();
    expect(formLevelError(unnamed)).toBe(unnamed);
    const offline = new TypeError("fetch failed");
    expect(formLevelError(offline)).toBe(offline);
  });

  it("labels a select by its choices' names and keeps their values", () => {
    const html = renderToStaticMarkup(
      <SelectField
        label="Mode"
        choices={["enforce", "dryrun"]}
        labelOf={(m) => (m === "dryrun" ? "dryrun (record only)" : m)}
        value="dryrun"
        onChange={() => {}}
      />,
    );
    expect(options(html)).toEqual(["enforce", "dryrun"]);
    expect(html).toContain(">dryrun (record only)</option>");
    expect(html).toMatch(/<option value="dryrun" selected="">/);
  });

  it("labels a text area and puts the API's message for it beside it, announced with it", () => {
    const html = renderToStaticMarkup(
      <TextAreaField
        label="Description (JSON or YAML)"
        error="Not an OpenAPI description"
        rows={6}
        className="font-mono"
        value="{}"
        onChange={() => {}}
      />,
    );
    const id = /<label for="([^"]+)"/.exec(html)?.[1];
    expect(id).toBeTruthy();
    expect(html).toMatch(new RegExp(`<textarea id="${id}" aria-describedby="${id}-note" aria-invalid="true" rows="6"`));
    expect(html).toContain("font-mono");
    expect(html).toContain(`<span id="${id}-note" aria-live="polite" class="text-xs empty:-mt-1 text-red-700`);
    expect(html).toContain("Not an OpenAPI description");
  });

  it("groups radio choices under their legend, one name for the group, the current one checked", () => {
    const html = renderToStaticMarkup(
      <RadioField
        legend="Source"
        choices={[
          ["mcp", "MCP server URL"],
          ["openapi-url", "OpenAPI description URL"],
        ]}
        value="openapi-url"
        onChange={() => {}}
      />,
    );
    expect(html).toContain('<legend class="mb-1 font-medium">Source</legend>');
    const radios = [
      ...html.matchAll(/<label[^>]*><input type="radio" name="([^"]+)"( checked="")?\/>([^<]+)<\/label>/g),
    ];
    expect(radios.map((m) => [m[3], Boolean(m[2])])).toEqual([
      ["MCP server URL", false],
      ["OpenAPI description URL", true],
    ]);
    expect(new Set(radios.map((m) => m[1])).size).toBe(1);
  });
});
