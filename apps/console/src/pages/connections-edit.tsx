import type { components } from "@agentplane/sdk";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { call } from "../api/client.ts";
import { AwsCredentialField, useAwsCredentials } from "../components/aws-credential-field.tsx";
import { FormDialog } from "../components/form.tsx";
import { LabelsField } from "../components/labels-field.tsx";
import { TextField } from "../components/ui.tsx";
import { formatLabels, parseLabels } from "../lib/labels.ts";
import { fieldErrorsOf } from "../lib/problem.ts";

type Cluster = components["schemas"]["Cluster"];
type AwsConnection = components["schemas"]["AwsConnection"];

/** What both connections have and edit alike: a name, a description and labels. */
interface Basics {
  name: string;
  description: string;
  labels: Record<string, string>;
}

/** A value and its setter, as `useState` returns them. */
type Bound = readonly [string, (value: string) => void];

/** A connection's name and description, each with the API's message for it beside it. */
export function NameFields({
  name: [name, onName],
  description: [description, onDescription],
  fieldError,
}: {
  name: Bound;
  description: Bound;
  fieldError: (field: string) => string | undefined;
}) {
  return (
    <>
      <TextField label="Name" error={fieldError("name")} value={name} onChange={(e) => onName(e.target.value)} />
      <TextField
        label="Description"
        error={fieldError("description")}
        value={description}
        onChange={(e) => onDescription(e.target.value)}
      />
    </>
  );
}

/**
 * The editing state of a connection's name, description and labels, and the save that sends
 * them (with `extra` fields) and, once done, refreshes `listKey` and closes.
 */
function useEditBasics(
  current: { name: string; description?: string | null; labels: Record<string, string> },
  save: (basics: Basics) => Promise<unknown>,
  listKey: unknown[],
  onClose: () => void,
) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(current.name);
  const [description, setDescription] = useState(current.description ?? "");
  const [labelText, setLabelText] = useState(formatLabels(current.labels));
  const parsed = parseLabels(labelText);
  const mutation = useMutation({
    mutationFn: () => save({ name, description, labels: parsed.labels }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: listKey });
      onClose();
    },
  });
  const fieldError = fieldErrorsOf(mutation.error);
  const fields = {
    name: <NameFields name={[name, setName]} description={[description, setDescription]} fieldError={fieldError} />,
    labels: <LabelsField value={labelText} onChange={setLabelText} error={parsed.error ?? fieldError("labels")} />,
  };
  return { mutation, fieldError, fields, invalid: !!parsed.error };
}

/** The dialog both edits share: a problem's field errors beside the fields, "Save" to send. */
function EditDialog({
  title,
  edit,
  onClose,
  children,
}: {
  title: string;
  edit: ReturnType<typeof useEditBasics>;
  onClose: () => void;
  children?: ReactNode;
}) {
  return (
    <FormDialog
      onOpenChange={(o) => !o && onClose()}
      title={title}
      submission={edit.mutation}
      onSubmit={() => edit.mutation.mutate()}
      submitLabel="Save"
      pendingLabel="Saving…"
      invalid={edit.invalid}
      noValidate
      fieldErrorsBeside
    >
      {edit.fields.name}
      {children}
      {edit.fields.labels}
    </FormDialog>
  );
}

/** Renames a cluster, changes its description and labels (PATCH /v1/clusters/{clusterId}). */
export function EditCluster({ cluster, onClose }: { cluster: Cluster; onClose: () => void }) {
  const edit = useEditBasics(
    cluster,
    (body) => call("updateCluster", { path: { clusterId: cluster.id }, body }),
    ["clusters", cluster.projectId],
    onClose,
  );
  return <EditDialog title={`Edit cluster ${cluster.name}`} edit={edit} onClose={onClose} />;
}

/**
 * Renames an AWS connection and changes its description, default region, credential (a role ARN
 * lives in its aws-role credential) and labels (PATCH /v1/aws-connections/{connectionId}).
 */
export function EditAwsConnection({ connection, onClose }: { connection: AwsConnection; onClose: () => void }) {
  const [region, setRegion] = useState(connection.defaultRegion);
  const [credentialId, setCredentialId] = useState(connection.credentialId);
  const aws = useAwsCredentials(connection.projectId);
  const edit = useEditBasics(
    connection,
    (basics) =>
      call("updateAwsConnection", {
        path: { connectionId: connection.id },
        body: { ...basics, defaultRegion: region, credentialId },
      }),
    ["aws-connections", connection.projectId],
    onClose,
  );
  return (
    <EditDialog title={`Edit AWS connection ${connection.name}`} edit={edit} onClose={onClose}>
      <TextField
        label="Default region"
        error={edit.fieldError("defaultRegion")}
        value={region}
        onChange={(e) => setRegion(e.target.value)}
      />
      <AwsCredentialField
        credentials={aws}
        value={credentialId}
        onChange={setCredentialId}
        error={edit.fieldError("credentialId")}
        hint="An aws-keys or aws-role credential"
      />
    </EditDialog>
  );
}
