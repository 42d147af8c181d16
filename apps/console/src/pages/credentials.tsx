import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useParams } from "react-router";
import { call } from "../api/client.ts";
import { useProjectRole } from "../api/hooks.ts";
import { FormDialog, SelectField } from "../components/form.tsx";
import { ProjectPicker, useChosenProject } from "../components/project-picker.tsx";
import { Button, ErrorNote, Guarded, Loading, PageTitle, Table, Td, TextField } from "../components/ui.tsx";
import { CREDENTIAL_KINDS, secretFields } from "../lib/credential-kinds.ts";
import { allows } from "../lib/permissions.ts";
import { fieldErrorsOf } from "../lib/problem.ts";

/** A project's credentials: created, rotated and deleted here; their secrets are never shown back. */
export default function CredentialsPage() {
  const { orgId } = useParams() as { orgId: string };
  const { projectId, choose } = useChosenProject(orgId);
  const role = useProjectRole(projectId);
  const manage = allows("credentials:manage", role);
  const queryClient = useQueryClient();
  const [creating, setCreating] = useState(false);
  const [rotating, setRotating] = useState<{ id: string; name: string; kind: string }>();
  const credentials = useQuery({
    queryKey: ["credentials", projectId],
    queryFn: () => call("listCredentials", { path: { projectId: projectId! }, query: { limit: 100 } }),
    enabled: !!projectId,
  });
  const remove = useMutation({
    mutationFn: (credentialId: string) => call("deleteCredential", { path: { projectId: projectId!, credentialId } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ["credentials", projectId] }),
  });
  return (
    <>
      <PageTitle
        actions={
          <Guarded allowance={manage}>
            {(disabled) => (
              <Button variant="primary" disabled={disabled || !projectId} onClick={() => setCreating(true)}>
                New credential
              </Button>
            )}
          </Guarded>
        }
      >
        Credentials
      </PageTitle>
      <ProjectPicker orgId={orgId} projectId={projectId} onChange={choose} />
      <p className="mb-3 text-sm text-slate-600 dark:text-slate-300">
        Secrets are stored encrypted and never shown again after they are saved; only hints (last 4 characters) and
        public fields are.
      </p>
      {credentials.isLoading ? <Loading what="credentials" /> : null}
      <ErrorNote error={credentials.error} retry={() => void credentials.refetch()} />
      <ErrorNote error={remove.error} />
      {credentials.data?.items.length ? (
        <Table label="Credentials" headers={["Name", "Kind", "Public fields", "Version", "Last used", ""]}>
          {credentials.data.items.map((c) => (
            <tr key={c.id}>
              <Td wrap>{c.name}</Td>
              <Td mono>{c.kind}</Td>
              <Td mono>
                {Object.entries(c.metadata)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(", ")}
              </Td>
              <Td>{c.secretVersion}</Td>
              <Td>{c.lastUsedAt ? new Date(c.lastUsedAt).toLocaleString() : "never"}</Td>
              <Td>
                <span className="flex gap-2">
                  <Button
                    disabled={!manage.allowed}
                    aria-label={`Rotate ${c.name}`}
                    onClick={() => setRotating({ id: c.id, name: c.name, kind: c.kind })}
                  >
                    Rotate
                  </Button>
                  <Button
                    variant="danger"
                    disabled={!manage.allowed || remove.isPending}
                    aria-label={`Delete ${c.name}`}
                    onClick={() => remove.mutate(c.id)}
                  >
                    Delete
                  </Button>
                </span>
              </Td>
            </tr>
          ))}
        </Table>
      ) : credentials.isSuccess ? (
        <p className="text-sm">No credentials in this project.</p>
      ) : null}
      {!manage.allowed && credentials.data?.items.length ? (
        <p className="mt-2 text-xs text-slate-600 dark:text-slate-300">Rotate and delete: {manage.reason}.</p>
      ) : null}
      {projectId ? (
        <>
          <CredentialForm projectId={projectId} open={creating} onClose={() => setCreating(false)} />
          <CredentialForm
            projectId={projectId}
            rotate={rotating}
            open={rotating !== undefined}
            onClose={() => setRotating(undefined)}
          />
        </>
      ) : null}
    </>
  );
}

/** Create (name, kind and the kind's fields) or rotate (the secret fields only, a new version). */
function CredentialForm({
  projectId,
  rotate,
  open,
  onClose,
}: {
  projectId: string;
  rotate?: { id: string; name: string; kind: string } | undefined;
  open: boolean;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [kind, setKind] = useState("http-bearer");
  const [fields, setFields] = useState<Record<string, string>>({});
  const shownKind = rotate?.kind ?? kind;
  const spec = CREDENTIAL_KINDS[shownKind] ?? { required: [], optional: [], secret: [] };
  const asked = rotate ? secretFields(shownKind) : [...spec.required, ...spec.optional];
  const save = useMutation({
    mutationFn: () => {
      const values = Object.fromEntries(asked.filter((f) => fields[f]).map((f) => [f, fields[f]!]));
      return rotate
        ? call("updateCredential", { path: { projectId, credentialId: rotate.id }, body: values })
        : call("createCredential", { path: { projectId }, body: { name, kind: kind as never, ...values } });
    },
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["credentials", projectId] });
      close();
    },
  });
  // The values leave the page's memory as soon as the dialog closes.
  const close = () => {
    setFields({});
    setName("");
    save.reset();
    onClose();
  };
  const fieldError = fieldErrorsOf(save.error);
  return (
    <FormDialog
      open={open}
      onOpenChange={(o) => (o ? undefined : close())}
      title={rotate ? `Rotate ${rotate.name}` : "New credential"}
      {...(rotate ? { description: "The new secret replaces the old one; running users pick it up." } : {})}
      submission={save}
      onSubmit={() => save.mutate()}
      submitLabel={rotate ? "Rotate" : "Create credential"}
      pendingLabel="Saving…"
      noValidate
      fieldErrorsBeside
    >
      {rotate ? null : (
        <>
          <TextField
            label="Name"
            required
            maxLength={100}
            value={name}
            error={fieldError("name")}
            onChange={(e) => setName(e.target.value)}
          />
          <SelectField
            label="Kind"
            error={fieldError("kind")}
            choices={Object.keys(CREDENTIAL_KINDS)}
            value={kind}
            onChange={(k) => {
              setKind(k);
              setFields({});
            }}
          />
        </>
      )}
      {asked.map((f) => (
        <TextField
          key={`${shownKind}-${f}`}
          label={f}
          type={spec.secret.includes(f) ? "password" : "text"}
          autoComplete="off"
          required={spec.required.includes(f)}
          hint={spec.required.includes(f) ? undefined : "Optional"}
          error={fieldError(f)}
          value={fields[f] ?? ""}
          onChange={(e) => setFields((v) => ({ ...v, [f]: e.target.value }))}
        />
      ))}
    </FormDialog>
  );
}
