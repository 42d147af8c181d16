import type { components } from "@agentplane/sdk";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { call } from "../api/client.ts";
import { Dialog } from "../components/dialog.tsx";
import { LabelsField } from "../components/labels-field.tsx";
import { Button, ErrorNote, Field, INPUT, TextField } from "../components/ui.tsx";
import { formatLabels, parseLabels } from "../lib/labels.ts";
import { ApiError, fieldErrorsOf } from "../lib/problem.ts";

type Cluster = components["schemas"]["Cluster"];
type AwsConnection = components["schemas"]["AwsConnection"];

/** A failed save's problem is shown beside its fields; only an error no field names goes below. */
function formLevel(error: unknown): unknown {
  return error instanceof ApiError && error.problem.errors?.length ? undefined : error;
}

/** Renames a cluster, changes its description and labels (PATCH /v1/clusters/{clusterId}). */
export function EditCluster({ cluster, onClose }: { cluster: Cluster; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(cluster.name);
  const [description, setDescription] = useState(cluster.description ?? "");
  const [labelText, setLabelText] = useState(formatLabels(cluster.labels));
  const parsed = parseLabels(labelText);
  const save = useMutation({
    mutationFn: () =>
      call("updateCluster", {
        path: { clusterId: cluster.id },
        body: { name, description, labels: parsed.labels },
      }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["clusters", cluster.projectId] });
      onClose();
    },
  });
  const fieldError = fieldErrorsOf(save.error);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!parsed.error) save.mutate();
  };
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()} title={`Edit cluster ${cluster.name}`}>
      <form onSubmit={submit} noValidate>
        <TextField label="Name" error={fieldError("name")} value={name} onChange={(e) => setName(e.target.value)} />
        <TextField
          label="Description"
          error={fieldError("description")}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
        />
        <LabelsField value={labelText} onChange={setLabelText} error={parsed.error ?? fieldError("labels")} />
        <ErrorNote error={formLevel(save.error)} />
        <Button type="submit" variant="primary" disabled={save.isPending || !!parsed.error}>
          {save.isPending ? "Saving…" : "Save"}
        </Button>
      </form>
    </Dialog>
  );
}

/**
 * Renames an AWS connection and changes its description, default region, credential (a role ARN
 * lives in its aws-role credential) and labels (PATCH /v1/aws-connections/{connectionId}).
 */
export function EditAwsConnection({ connection, onClose }: { connection: AwsConnection; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(connection.name);
  const [description, setDescription] = useState(connection.description ?? "");
  const [region, setRegion] = useState(connection.defaultRegion);
  const [credentialId, setCredentialId] = useState(connection.credentialId);
  const [labelText, setLabelText] = useState(formatLabels(connection.labels));
  const parsed = parseLabels(labelText);
  const credentials = useQuery({
    queryKey: ["credentials", connection.projectId, "aws"],
    queryFn: () => call("listCredentials", { path: { projectId: connection.projectId }, query: { limit: 100 } }),
  });
  const aws = (credentials.data?.items ?? []).filter((c) => c.kind === "aws-keys" || c.kind === "aws-role");
  const save = useMutation({
    mutationFn: () =>
      call("updateAwsConnection", {
        path: { connectionId: connection.id },
        body: { name, description, defaultRegion: region, credentialId, labels: parsed.labels },
      }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["aws-connections", connection.projectId] });
      onClose();
    },
  });
  const fieldError = fieldErrorsOf(save.error);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!parsed.error) save.mutate();
  };
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()} title={`Edit AWS connection ${connection.name}`}>
      <form onSubmit={submit} noValidate>
        <TextField label="Name" error={fieldError("name")} value={name} onChange={(e) => setName(e.target.value)} />
        <TextField
          label="Description"
          error={fieldError("description")}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
        />
        <TextField
          label="Default region"
          error={fieldError("defaultRegion")}
          value={region}
          onChange={(e) => setRegion(e.target.value)}
        />
        <Field label="Credential" error={fieldError("credentialId")} hint="An aws-keys or aws-role credential">
          {(p) => (
            <select {...p} className={INPUT} value={credentialId} onChange={(e) => setCredentialId(e.target.value)}>
              {aws.some((c) => c.id === credentialId) ? null : <option value={credentialId}>{credentialId}</option>}
              {aws.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name} ({c.kind})
                </option>
              ))}
            </select>
          )}
        </Field>
        <LabelsField value={labelText} onChange={setLabelText} error={parsed.error ?? fieldError("labels")} />
        <ErrorNote error={formLevel(save.error)} />
        <Button type="submit" variant="primary" disabled={save.isPending || !!parsed.error}>
          {save.isPending ? "Saving…" : "Save"}
        </Button>
      </form>
    </Dialog>
  );
}
