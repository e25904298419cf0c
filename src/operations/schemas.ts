import { Type } from '@sinclair/typebox';
import { PathId, UnixSeconds } from '../http/schemas.js';

export const Operation = Type.Object(
  {
    id: Type.String(),
    kind: Type.String({ description: 'What the operation does, e.g. `install.restore`, `machine.suspend`' }),
    done: Type.Boolean(),
    error: Type.Union([Type.Object({ code: Type.Integer(), message: Type.String() }, { additionalProperties: false }), Type.Null()], { description: 'Set when the operation failed' }),
    result: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'Set when the operation succeeded' }),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { title: 'Operation', additionalProperties: false },
);

/** The answer of a request that starts asynchronous work (202): machines' and installs' deletions. */
export const OperationAccepted = Type.Object(
  { operation_id: Type.String({ description: 'The operation to poll (GET /v1/operations/{id}): done when the work is' }) },
  { title: 'OperationAccepted', additionalProperties: false },
);

export const OperationParams = Type.Object({ id: PathId(64, 'Operation id, `op_<id>` or bare') });
