/**
 * api-error (error path): the n-th write REQUEST of the controller matching `on` (verb, key,
 * subresource; counted when the request arrives, failed ones included, unlike the other faults'
 * triggers which count successful writes) gets `answer` instead of its normal outcome. One-shot:
 * later requests pass.
 *
 * The error answers are made by the proxy, not forwarded (the write is not applied), each with the
 * Status kube-apiserver writes in that case (proxy/api-errors.ts). `lost-response`: the write is
 * forwarded and applied, then the controller's stream is reset before the answer reaches it (the
 * ambiguous outcome). `slow`: the write is forwarded and applied, and its answer held `slowSeconds`
 * (past the client's timeout; default SLOW_SECONDS_DEFAULT, at most SLOW_SECONDS_MAX) before delivery.
 */
import { describeWrite, type WriteTrigger } from '../trigger.js';
import { declareFault, field, optional, type FaultOf } from './declare.js';
import { writeTriggerField } from './fields.js';

export const API_ERROR_ANSWERS = ['conflict', 'too-many-requests', 'internal-error', 'service-unavailable', 'timeout', 'lost-response', 'slow'] as const;
export type ApiErrorAnswer = (typeof API_ERROR_ANSWERS)[number];

/** Bounds of a slow answer: long enough to outlast a client timeout, short enough for a test run. */
export const SLOW_SECONDS_MAX = 120;
export const SLOW_SECONDS_DEFAULT = 35;

const ANSWER_TEXT: Record<ApiErrorAnswer, string> = {
  conflict: 'a 409 Conflict',
  'too-many-requests': 'a 429 Too Many Requests (Retry-After)',
  'internal-error': 'a 500 Internal Server Error',
  'service-unavailable': 'a 503 Service Unavailable',
  timeout: 'a 504 Timeout',
  'lost-response': 'a lost response (applied, then the connection reset)',
  slow: 'a slow answer (applied, answered late)',
};

export const apiError = declareFault({
  type: 'api-error',
  description: 'Error path: fail one write request of the controller on purpose, within the API contract',
  fields: {
    on: writeTriggerField('The n-th matching write request by the controller (failed attempts count too)'),
    answer: field(
      {
        enum: [...API_ERROR_ANSWERS],
        description:
          'How the proxy answers that request: an error as kube-apiserver writes it (the write is not applied), a lost response (applied, then the connection is reset), or a slow answer',
      },
      (v, raw, path, before) => {
        const answer = v.oneOf(raw, path, API_ERROR_ANSWERS);
        // kube-apiserver answers a create that collides with 409 AlreadyExists, never Conflict.
        if (answer === 'conflict' && (before.on as WriteTrigger).verb === 'create')
          v.fail(path, 'an answer a create can get (a create never gets 409 Conflict: kube-apiserver answers AlreadyExists)');
        return answer;
      },
    ),
    slowSeconds: optional(
      field(
        {
          type: 'number',
          minimum: 1,
          maximum: SLOW_SECONDS_MAX,
          description: `With answer slow: how long the answer is held (default ${SLOW_SECONDS_DEFAULT})`,
        },
        (v, raw, path, before) => {
          if (before.answer !== 'slow') v.fail(path, `no slowSeconds unless answer is slow (answer is ${String(before.answer)})`);
          return v.number(raw, path, { min: 1, max: SLOW_SECONDS_MAX });
        },
      ),
    ),
  },
  describe: (f) => {
    const slow = f.answer === 'slow' ? ` after ${f.slowSeconds ?? SLOW_SECONDS_DEFAULT} s` : '';
    return `answer ${ANSWER_TEXT[f.answer]}${slow} when the controller ${describeWrite(f.on).replace(/ time\)$/, ' request)')}`;
  },
});

export type ApiErrorFault = FaultOf<typeof apiError>;

export const describeApiError = (f: ApiErrorFault): string => apiError.describe(f);
