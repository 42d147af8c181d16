import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { formLevelError, RoleField, RoleSelect } from "../src/components/form.tsx";
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
    expect(html).toContain(`<span id="${id}-note" class="text-xs text-red-700`);
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
});
