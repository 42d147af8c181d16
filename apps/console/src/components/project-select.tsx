import { useQuery } from "@tanstack/react-query";
import { call } from "../api/client.ts";
import { Field, INPUT } from "./ui.tsx";

/** A choice of one of the organization's projects (its first 200), or "Every project". */
export function ProjectSelect({
  orgId,
  value,
  onChange,
  error,
  hint,
}: {
  orgId: string;
  value: string;
  onChange: (projectId: string) => void;
  error?: string | undefined;
  hint?: string;
}) {
  const projects = useQuery({
    queryKey: ["projects", orgId, "choices"],
    queryFn: () => call("listProjects", { path: { orgId }, query: { limit: 200 } }),
  });
  return (
    <Field label="Project" error={error} {...(hint ? { hint } : {})}>
      {(p) => (
        <select {...p} className={INPUT} value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">Every project</option>
          {projects.data?.items.map((pr) => (
            <option key={pr.id} value={pr.id}>
              {pr.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
