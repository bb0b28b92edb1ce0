import { describe, expect, it } from 'vitest';
import { checkDistinctEngines, engineSupport, parseEngineSpec } from './engines.ts';

describe('parseEngineSpec', () => {
  it.each([
    ['unix:///var/run/docker.sock', { host: 'unix:///var/run/docker.sock' }],
    ['unix:///run/dd2/docker.sock=2', { host: 'unix:///run/dd2/docker.sock', slots: 2 }],
    ['tcp://build-2:2376=4', { host: 'tcp://build-2:2376', slots: 4 }],
    ['ssh://me@build-1=1', { host: 'ssh://me@build-1', slots: 1 }],
  ])('%s', (text, spec) => {
    expect(parseEngineSpec(text)).toEqual(spec);
  });

  it('refuses a bad URL or slot count, naming the flag and the value', () => {
    expect(() => parseEngineSpec('unix:///s=0')).toThrow(/--engine unix:\/\/\/s=0: SLOTS must be at least 1/);
    expect(() => parseEngineSpec('ftp://h=2')).toThrow(/--engine ftp:\/\/h=2: unsupported Docker endpoint: ftp:\/\/h/);
    expect(() => parseEngineSpec('')).toThrow(/--engine/);
  });
});

describe('checkDistinctEngines', () => {
  it('refuses one engine named twice, however it is spelled', () => {
    expect(() => checkDistinctEngines([{ host: '/var/run/docker.sock' }, { host: 'unix:///var/run/docker.sock', slots: 2 }])).toThrow(/unix:\/\/\/var\/run\/docker.sock given twice/);
    expect(() => checkDistinctEngines([{ host: '/a.sock' }, { host: '/b.sock' }])).not.toThrow();
  });
});

describe('engineSupport', () => {
  it('refuses a Podman engine, naming the endpoint, the product and why; accepts Docker', () => {
    const refused = engineSupport('unix:///run/podman/podman.sock', { name: 'Podman Engine', version: '4.3.1' });
    expect(refused?.code).toBe('SANDBOX_UNAVAILABLE');
    expect(refused?.message).toMatch(/unix:\/\/\/run\/podman\/podman.sock is Podman Engine 4.3.1: .*podman-init/);
    expect(refused?.isInfrastructure).toBe(true);
    expect(engineSupport('unix:///var/run/docker.sock', { name: 'Engine', version: '20.10.24+dfsg1' })).toBeUndefined();
  });
});
