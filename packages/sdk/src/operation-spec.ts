/** One `/v1` operation as the CLI and `paginate` need it, generated from the OpenAPI document. */
export interface OperationSpec {
  id: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  tag: string;
  summary: string;
  pathParams: string[];
  query: ParameterSpec[];
  /** The JSON request body, when the operation takes one. */
  body: { required: boolean; fields: ParameterSpec[] } | null;
  /** A page of `items` (with `nextCursor` when the list is paginated). */
  list: { paginated: boolean } | null;
  /** Field names of the answer (of one item for a list), for `--json a,b` and completion. */
  fields: string[];
  /** Answered without a token (activation, the sign-in device flow, invitation links). */
  public?: boolean;
  /** Served over a WebSocket upgrade, not plain HTTP. */
  websocket: boolean;
  /** A raw pass-through (`{path}` proxies): the body and answer are not JSON objects of ours. */
  passthrough: boolean;
}

export interface ParameterSpec {
  name: string;
  required: boolean;
  type: "string" | "integer" | "number" | "boolean" | "array" | "object";
  enum?: string[];
  /** Strings accepted besides the type (`latest` beside a version number). */
  literals?: string[];
  /** An array's item type when it is not string. */
  items?: ParameterSpec["type"];
  /** An array that may be a plain string instead (a command line beside an argv list). */
  orString?: true;
  description?: string;
}
