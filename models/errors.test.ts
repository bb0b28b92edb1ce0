import { APICallError, JSONParseError } from 'ai';
import { describe, expect, it } from 'vitest';
import { classifyFailure } from './errors.ts';

const ctx = { provider: 'openai', timedOut: false, cancelled: false, nowMs: Date.UTC(2025, 0, 1) };

function apiError(statusCode: number | undefined, headers: Record<string, string> = {}): APICallError {
  return new APICallError({
    message: `status ${statusCode}`,
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: {},
    ...(statusCode === undefined ? {} : { statusCode }),
    responseHeaders: headers,
  });
}

describe('classifyFailure', () => {
  it.each([
    [apiError(429, { 'retry-after': '2' }), { kind: 'infra', reason: 'rate_limit', retryable: true, status: 429, retryAfterMs: 2000 }],
    [apiError(429), { kind: 'infra', reason: 'rate_limit', retryable: true, status: 429 }],
    [apiError(503, { 'Retry-After': '3' }), { kind: 'infra', reason: 'server', retryable: true, status: 503, retryAfterMs: 3000 }],
    [apiError(500, { 'retry-after': '3' }), { kind: 'infra', reason: 'server', retryable: true, status: 500 }],
    [apiError(408), { kind: 'infra', reason: 'timeout', retryable: true, status: 408 }],
    [apiError(undefined), { kind: 'infra', reason: 'network', retryable: true }],
    [apiError(401), { kind: 'request', reason: 'auth', status: 401 }],
    [apiError(403), { kind: 'request', reason: 'auth', status: 403 }],
    [apiError(404), { kind: 'request', reason: 'not_found', status: 404 }],
    [apiError(400), { kind: 'request', reason: 'bad_request', status: 400 }],
    [apiError(422), { kind: 'request', reason: 'bad_request', status: 422 }],
    [new JSONParseError({ text: '<html>', cause: new Error('x') }), { kind: 'infra', reason: 'invalid_response', retryable: true }],
    [new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) }), { kind: 'infra', reason: 'network', retryable: true }],
    [new Error('something odd'), { kind: 'request', reason: 'bad_request' }],
  ])('%s', (error, want) => {
    const got = classifyFailure(error, ctx);
    expect(got).toMatchObject(want);
    if (!('retryAfterMs' in want)) expect(got).not.toHaveProperty('retryAfterMs');
  });

  it('puts the provider in the 401 message', () => {
    expect(classifyFailure(apiError(401), { ...ctx, provider: 'anthropic' }).message).toMatch(/^bad API key for anthropic/);
  });

  it('reads its own timeout and the caller\'s cancel before the error itself', () => {
    const abort = new DOMException('aborted', 'AbortError');
    expect(classifyFailure(abort, { ...ctx, timedOut: true })).toMatchObject({ kind: 'infra', reason: 'timeout', retryable: true });
    expect(classifyFailure(abort, { ...ctx, cancelled: true, timedOut: true })).toMatchObject({ kind: 'infra', reason: 'cancelled', retryable: false });
  });
});
