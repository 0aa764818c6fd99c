/**
 * What the extension does with one comm open from the kernel, free of JupyterLab objects so
 * it is unit-tested without a browser: validate, decide whether this browser acts, edit the
 * first notebook holding the cell, and say what to answer.
 */

import { applyInsert, ISharedNotebookLike } from './apply';
import { IReply, isForThisClient, makeReply, parseRequest } from './protocol';

/** The inputs of one decision. */
export interface IHandleInput {
  /** The comm open's data. */
  data: unknown;
  /** The session of the message the kernel was handling when it opened the comm. */
  parentSession: string | null;
  /** This browser connection's session id (`kernel.clientId`). */
  clientId: string;
  /** The shared models of the open notebooks that use this kernel. */
  notebooks: () => ISharedNotebookLike[];
}

/**
 * The reply to send, or null to stay silent (the request belongs to another collaborator's
 * browser, which answers it).
 */
export function handleRequest(input: IHandleInput): IReply | null {
  const parsed = parseRequest(input.data);
  if (!parsed.ok) {
    return makeReply(parsed.requestId, 'error', parsed.error);
  }
  const req = parsed.request;
  const origin = req.origin ?? (input.parentSession || null);
  if (!isForThisClient(origin, input.clientId)) {
    return null;
  }
  if (req.action === 'ping') {
    return makeReply(req.requestId, 'ok', 'kernelopt-jupyter labextension');
  }
  const notebooks = input.notebooks();
  if (notebooks.length === 0) {
    return makeReply(req.requestId, 'error', 'no open notebook uses this kernel');
  }
  for (const nb of notebooks) {
    try {
      const outcome = applyInsert(nb, req);
      if (outcome.status === 'ok') {
        return makeReply(req.requestId, 'ok', outcome.detail);
      }
    } catch (err) {
      return makeReply(req.requestId, 'error', `editing the notebook failed: ${String(err)}`);
    }
  }
  return makeReply(req.requestId, 'error', `no cell with id ${req.cellId} in the notebook`);
}
