/**
 * The kernelopt.notebook comm protocol: message validation and the pure decisions the
 * extension makes (which notebook cell, which index, whether this browser should act).
 *
 * Nothing here touches JupyterLab, so it is unit-tested without a browser.
 */

/** The comm target the kernel side (kernelopt_jupyter/notebook/bridge.py) opens. */
export const COMM_TARGET = 'kernelopt.notebook';

/** Key under which an inserted cell records the request that created it. */
export const METADATA_KEY = 'kernelopt';

export type InsertMode = 'below' | 'replace';

/** A validated `insert_cell` request. */
export interface IInsertRequest {
  action: 'insert_cell';
  requestId: string;
  cellId: string;
  source: string;
  mode: InsertMode;
  /** Session id of the browser whose click caused the request, when the kernel knows it. */
  origin: string | null;
}

/** A validated `ping` request: the kernel asks whether an extension is listening. */
export interface IPingRequest {
  action: 'ping';
  requestId: string;
  origin: string | null;
}

export type Request = IInsertRequest | IPingRequest;

/** The reply sent back on the comm. */
export interface IReply {
  request_id: string;
  status: 'ok' | 'error';
  detail: string;
}

/** Result of validating an incoming message. */
export type ParseResult =
  | { ok: true; request: Request }
  | { ok: false; requestId: string; error: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validate the data of a comm open (or comm message) from the kernel.
 *
 * Errors name the offending field so the kernel side can show a one-line message.
 */
export function parseRequest(data: unknown): ParseResult {
  if (!isRecord(data)) {
    return { ok: false, requestId: '', error: 'message is not a JSON object' };
  }
  const requestId = typeof data.request_id === 'string' ? data.request_id : '';
  const fail = (error: string): ParseResult => ({ ok: false, requestId, error });
  if (requestId === '') {
    return fail('request_id must be a non-empty string');
  }
  const origin =
    typeof data.origin === 'string' && data.origin !== '' ? data.origin : null;
  if (data.action === 'ping') {
    return { ok: true, request: { action: 'ping', requestId, origin } };
  }
  if (data.action !== 'insert_cell') {
    return fail(`unknown action ${JSON.stringify(data.action)}`);
  }
  if (typeof data.cell_id !== 'string' || data.cell_id === '') {
    return fail('cell_id must be a non-empty string');
  }
  if (typeof data.source !== 'string') {
    return fail('source must be a string');
  }
  const mode = data.mode === undefined ? 'below' : data.mode;
  if (mode !== 'below' && mode !== 'replace') {
    return fail(`mode must be "below" or "replace", got ${JSON.stringify(mode)}`);
  }
  return {
    ok: true,
    request: {
      action: 'insert_cell',
      requestId,
      cellId: data.cell_id,
      source: data.source,
      mode,
      origin
    }
  };
}

/**
 * Whether this browser should act on a request.
 *
 * With real-time collaboration every browser connected to the kernel receives the comm;
 * only the one whose click (or cell run) caused it edits the shared notebook, or the cell
 * would be inserted once per browser. A request without an origin is acted on.
 */
export function isForThisClient(origin: string | null, clientId: string): boolean {
  return origin === null || origin === clientId;
}

/** Where a request lands in a notebook, given its cells' ids in order. */
export type Placement =
  | { kind: 'insert'; index: number }
  | { kind: 'replace'; index: number }
  | { kind: 'missing' };

/** Compute the index to insert at (directly below the cell) or the cell to replace. */
export function placement(cellIds: readonly string[], cellId: string, mode: InsertMode): Placement {
  const index = cellIds.indexOf(cellId);
  if (index < 0) {
    return { kind: 'missing' };
  }
  return mode === 'below' ? { kind: 'insert', index: index + 1 } : { kind: 'replace', index };
}

/** Build a reply object in the wire format. */
export function makeReply(requestId: string, status: 'ok' | 'error', detail: string): IReply {
  return { request_id: requestId, status, detail };
}

/**
 * The comm target the extension opens on the kernel to tell it the notebook's current path
 * (kernelopt_jupyter/notebook/bridge.py registers it): a session is named after the notebook,
 * and the kernel's own idea of it (JPY_SESSION_NAME) is the name the notebook had when the
 * kernel started.
 */
export const PATH_TARGET = 'kernelopt.notebook_path';

/**
 * What to send the kernel before a cell runs: the notebook's path for a `%%kernelopt` cell
 * (the only cells that name a session), else null.
 */
export function pathMessage(cellSource: string, notebookPath: string): { path: string } | null {
  if (!cellSource.trimStart().startsWith('%%kernelopt') || !notebookPath) {
    return null;
  }
  return { path: notebookPath };
}
