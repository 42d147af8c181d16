import { useQuery } from "@tanstack/react-query";
import { call } from "../api/client.ts";
import type { Credential } from "../api/types.ts";
import { Field, INPUT } from "./ui.tsx";

/** The project's credentials an AWS connection can use (aws-keys, aws-role), loaded while `enabled`. */
export function useAwsCredentials(projectId: string, enabled = true): Credential[] {
  const credentials = useQuery({
    queryKey: ["credentials", projectId, "aws"],
    queryFn: () => call("listCredentials", { path: { projectId }, query: { limit: 100 } }),
    enabled,
  });
  return (credentials.data?.items ?? []).filter((c) => c.kind === "aws-keys" || c.kind === "aws-role");
}

/** The credential of an AWS connection; a chosen one not (or not yet) listed stays shown by its id. */
export function AwsCredentialField({
  credentials,
  value,
  onChange,
  error,
  hint,
}: {
  credentials: Credential[];
  value: string;
  onChange: (credentialId: string) => void;
  error: string | undefined;
  hint: string;
}) {
  return (
    <Field label="Credential" error={error} hint={hint}>
      {(p) => (
        <select {...p} className={INPUT} value={value} onChange={(e) => onChange(e.target.value)}>
          {!value || credentials.some((c) => c.id === value) ? null : <option value={value}>{value}</option>}
          {credentials.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name} ({c.kind})
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
