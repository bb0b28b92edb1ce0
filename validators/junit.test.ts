import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEntities, MESSAGE_CHARS, parseJunit, summarizeTests } from './junit.ts';

/** What pytest 7.2 writes (xunit2, the default family), trimmed. */
const PYTEST_REPORT = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" skipped="2" tests="6" time="0.05" timestamp="2024-05-14T01:55:39" hostname="c"><testcase classname="test_outputs" name="test_keys" time="0.001" /><testcase classname="test_outputs" name="test_error_count" time="0.001"><failure message="AssertionError: assert 143 == 144&#10; +  where 143 = len(...)">triage = {'error_count': 143}

    def test_error_count(triage):
&gt;       assert triage["error_count"] == 144
E       AssertionError: assert 143 == 144

test_outputs.py:22: AssertionError</failure></testcase><testcase classname="test_outputs.TestGroup" name="test_param[a-&lt;b&gt;]" time="0.000"><skipped type="pytest.skip" message="not on this platform">/tests/test_outputs.py:30: not on this platform</skipped></testcase><testcase classname="test_outputs" name="test_xfail" time="0.000"><skipped type="pytest.xfail" message="" /></testcase><testcase classname="test_outputs" name="test_teardown" time="0.001"><error message="failed on teardown with &quot;RuntimeError: boom&quot;">teardown trace</error></testcase><testcase classname="" name="test_broken" time="0.000"><error message="collection failure">ImportError</error></testcase></testsuite></testsuites>`;

describe('parseJunit', () => {
  it("reads pytest's report: ids, outcomes, messages", () => {
    const { tests, problems } = parseJunit(PYTEST_REPORT);
    expect(problems).toEqual([]);
    expect(tests).toEqual([
      { id: 'test_outputs::test_keys', outcome: 'passed' },
      { id: 'test_outputs::test_error_count', outcome: 'failed', message: 'AssertionError: assert 143 == 144\n +  where 143 = len(...)' },
      { id: 'test_outputs.TestGroup::test_param[a-<b>]', outcome: 'skipped', message: 'not on this platform' },
      { id: 'test_outputs::test_xfail', outcome: 'skipped' },
      { id: 'test_outputs::test_teardown', outcome: 'error', message: 'failed on teardown with "RuntimeError: boom"' },
      { id: 'test_broken', outcome: 'error', message: 'collection failure' },
    ]);
    expect(summarizeTests(tests)).toEqual({ total: 6, passed: 1, failed: 1, error: 2, skipped: 2 });
  });

  it('takes the text when a failure has no message, and CDATA as text', () => {
    const xml = '<testsuite><testcase classname="c" name="n"><failure><![CDATA[assert a < b]]> &amp; more</failure></testcase></testsuite>';
    expect(parseJunit(xml).tests).toEqual([{ id: 'c::n', outcome: 'failed', message: 'assert a < b & more' }]);
  });

  it('prefers failed over error over skipped when a test has several', () => {
    const xml =
      '<testsuite><testcase classname="c" name="n"><skipped message="s"/><failure message="f"/><error message="e"/></testcase>' +
      '<testcase classname="c" name="m"><error message="e"/><skipped message="s"/></testcase></testsuite>';
    expect(parseJunit(xml).tests).toEqual([
      { id: 'c::n', outcome: 'failed', message: 'f' },
      { id: 'c::m', outcome: 'error', message: 'e' },
    ]);
  });

  it("ignores failure-like elements that are not the testcase's own (system-out, properties)", () => {
    const xml =
      '<testsuite><testcase classname="c" name="n"><system-out>&lt;failure message="x"/&gt; <failure>inside</failure></system-out>' +
      '<properties><property name="failure" value="1"/></properties></testcase></testsuite>';
    expect(parseJunit(xml).tests).toEqual([{ id: 'c::n', outcome: 'passed' }]);
  });

  it('reads attributes with single quotes and > inside values, skips comments, PIs and DOCTYPE', () => {
    const xml = `<?xml version='1.0'?><!DOCTYPE x [ <!ENTITY e "v"> ]><!-- <testcase name="ghost"/> --><testsuite><testcase classname='a>b' name='t'/></testsuite>`;
    expect(parseJunit(xml)).toEqual({ tests: [{ id: 'a>b::t', outcome: 'passed' }], problems: [] });
  });

  it('keeps what it read from a file cut short, and says so', () => {
    const cut = PYTEST_REPORT.slice(0, PYTEST_REPORT.indexOf('test_outputs.TestGroup') + 10);
    const { tests, problems } = parseJunit(cut);
    expect(tests.map((t) => t.outcome)).toEqual(['passed', 'failed']);
    expect(problems.join(' ')).toMatch(/cut short/);
  });

  it('reports a testcase left open at the end', () => {
    const { tests, problems } = parseJunit('<testsuite><testcase classname="c" name="n"><failure message="boom">');
    expect(tests).toEqual([{ id: 'c::n', outcome: 'failed', message: 'boom' }]);
    expect(problems).toEqual(['testcase c::n not closed (file cut short?)']);
  });

  it('says when the input is not a JUnit report at all', () => {
    expect(parseJunit('')).toEqual({ tests: [], problems: ['no <testsuite> element: not a JUnit report'] });
    expect(parseJunit('not xml <<< at all').problems.length).toBeGreaterThan(0);
  });

  it('cuts long messages', () => {
    const long = 'x'.repeat(MESSAGE_CHARS * 3);
    const [t] = parseJunit(`<testsuite><testcase classname="c" name="n"><failure message="${long}"/></testcase></testsuite>`).tests;
    expect(t?.message?.length).toBe(MESSAGE_CHARS + 1);
  });

  it('decodes the XML entities and character references, leaving unknown ones', () => {
    expect(decodeEntities('&lt;&gt;&amp;&quot;&apos;&#65;&#x42;&#x1F600;&nbsp;&#xZZ;')).toBe('<>&"\'AB😀&nbsp;&#xZZ;');
  });

  it('never throws, whatever the input', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const r = parseJunit(s);
        expect(Array.isArray(r.tests)).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: PYTEST_REPORT.length }), (n) => {
        expect(() => parseJunit(PYTEST_REPORT.slice(0, n))).not.toThrow();
      }),
    );
  });
});
