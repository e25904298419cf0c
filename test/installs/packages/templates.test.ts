import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseTemplate, renderFiles, TemplateRenderError, TemplateSyntaxError, MAX_RENDER_STEPS } from '../../../src/installs/packages/templates.js';

const BUDGET = { maxSteps: MAX_RENDER_STEPS, maxOutputBytes: 8 * 1024 * 1024 };
const render = (template: string, values: Record<string, unknown>, budget = BUDGET) => renderFiles({ 'f.txt': template }, values, budget)[0]!.content.toString('utf8');

describe('strict Mustache rendering', () => {
  test('variables: escaped, triple and ampersand; numbers and booleans as text', () => {
    assert.equal(render('{{a}}|{{{a}}}|{{&a}}', { a: '<b>&"' }), '&lt;b&gt;&amp;&quot;|<b>&"|<b>&"');
    assert.equal(render('{{n}} {{t}} {{f}} {{z}}', { n: 1.5, t: true, f: false, z: 0 }), '1.5 true false 0');
    assert.equal(render('{{e}}', { e: '' }), '', 'an empty string is a value');
  });

  test('a variable with no value fails the render, naming the file and the tag', () => {
    for (const [template, tag] of [
      ['{{missing}}', '{{missing}}'],
      ['{{{missing}}}', '{{{missing}}}'],
      ['{{&missing}}', '{{{missing}}}'],
      ['{{a.b.c}}', '{{a.b.c}}'],
      ['{{nothing}}', '{{nothing}}'],
    ]) {
      assert.throws(
        () => render(template!, { a: { b: {} }, nothing: null }),
        (err: Error) => err instanceof TemplateRenderError && err.message === `f.txt: no value for ${tag}`,
        template,
      );
    }
  });

  test("JavaScript's prototype never supplies a value", () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'list.map', 'list.constructor']) {
      assert.throws(() => render(`{{${name}}}`, { list: [1] }), TemplateRenderError, name);
    }
  });

  test('objects and lists cannot be printed by a variable tag', () => {
    assert.throws(() => render('{{o}}', { o: { a: 1 } }), /\{\{o\}\} is an object/);
    assert.throws(() => render('{{l}}', { l: [1] }), /\{\{l\}\} is a list/);
  });

  test('sections over a missing or falsy value render empty, as Mustache says', () => {
    assert.equal(render('[{{#missing}}{{x}}{{/missing}}]', {}), '[]');
    for (const v of [false, null, 0, '', []]) assert.equal(render('[{{#v}}in{{/v}}]', { v }), '[]', JSON.stringify(v));
    assert.equal(render('[{{^missing}}none{{/missing}}]', {}), '[none]');
    assert.equal(render('[{{^l}}empty{{/l}}]', { l: [] }), '[empty]');
    assert.equal(render('[{{^v}}x{{/v}}]', { v: 1 }), '[]');
  });

  test('sections: lists repeat, objects push context, lookups walk outwards, dotted names and "."', () => {
    assert.equal(render('{{#items}}{{name}}={{port}};{{/items}}', { port: 80, items: [{ name: 'a' }, { name: 'b', port: 81 }] }), 'a=80;b=81;');
    assert.equal(render('{{#xs}}<{{.}}>{{/xs}}', { xs: [1, 'two', true] }), '<1><two><true>');
    assert.equal(render('{{#db}}{{host}}:{{port}}{{/db}} {{db.host}}', { db: { host: 'h', port: 5 } }), 'h:5 h');
    assert.equal(render('{{#on}}{{x}}{{/on}}', { on: true, x: 'y' }), 'y');
    assert.equal(render('{{=<% %>=}}<% x %> {{x}}', { x: 1 }), '1 {{x}}');
    assert.equal(render('a{{! comment }}b', {}), 'ab');
    assert.equal(render('  {{#a}}\n  line\n  {{/a}}\n', { a: true }), '  line\n', 'standalone section lines vanish');
  });

  test('a section over a long list cannot run for ever', () => {
    const xs = Array.from({ length: 2000 }, (_, i) => i);
    assert.throws(
      () => render('{{#xs}}{{#xs}}{{#xs}}{{/xs}}{{/xs}}{{/xs}}', { xs }),
      (e: Error) => e instanceof TemplateRenderError && e.message.includes(String(MAX_RENDER_STEPS)),
    );
  });

  test('the step budget is the one given', () => {
    const xs = Array.from({ length: 10 }, (_, i) => i);
    assert.equal(render('{{#xs}}{{.}}{{/xs}}', { xs }, { ...BUDGET, maxSteps: 25 }), '0123456789');
    assert.throws(() => render('{{#xs}}{{#xs}}{{.}}{{/xs}}{{/xs}}', { xs }, { ...BUDGET, maxSteps: 25 }), /more than 25 steps/);
  });

  test('a render larger than the output quota fails, counted in bytes of UTF-8 across all files', () => {
    const big = 'x'.repeat(1024 * 1024);
    assert.throws(
      () => render('{{#xs}}{{big}}{{/xs}}', { big, xs: Array.from({ length: 9 }, (_, i) => i) }),
      (e: Error) => e instanceof TemplateRenderError && /larger than the workspace's quota of 8388608 bytes/.test(e.message),
    );
    const small = { ...BUDGET, maxOutputBytes: 10 };
    assert.equal(render('{{x}}', { x: 'é'.repeat(5) }, small), 'é'.repeat(5), 'ten bytes exactly');
    assert.throws(() => render('{{x}}!', { x: 'é'.repeat(5) }, small), /quota of 10 bytes/);
    assert.throws(() => render('{{x}}', { x: 'é'.repeat(6) }, small), /quota of 10 bytes/, 'six characters, twelve bytes');
    assert.throws(() => renderFiles({ 'a.txt': '{{x}}', 'b.txt': '{{x}}' }, { x: 'é'.repeat(3) }, small), /b\.txt: .*quota of 10 bytes/, 'the files together');
  });

  test('parse: a template Mustache refuses, a partial, or too deep sections is a syntax error', () => {
    for (const t of ['{{#a}}', '{{/a}}', '{{x', '{{#a}}{{/b}}', '{{>p}}', '{{#a}}{{>p}}{{/a}}', `${'{{#a}}'.repeat(65)}${'{{/a}}'.repeat(65)}`]) {
      assert.throws(() => parseTemplate(t), TemplateSyntaxError, t);
    }
    assert.doesNotThrow(() => parseTemplate(`${'{{#a}}'.repeat(64)}${'{{/a}}'.repeat(64)}`));
    assert.deepEqual(parseTemplate(''), []);
  });

  test('every file renders with the same values; the first failure names its file', () => {
    const out = renderFiles({ 'a.txt': 'A {{x}}', 'b/c.txt': 'C {{x}}' }, { x: 'é' }, BUDGET);
    assert.deepEqual(
      out.map((o) => [o.path, o.content.toString('hex')]),
      [
        ['a.txt', Buffer.from('A é').toString('hex')],
        ['b/c.txt', Buffer.from('C é').toString('hex')],
      ],
    );
    assert.throws(() => renderFiles({ 'a.txt': '{{x}}', 'b.txt': '{{y}}' }, { x: 1 }, BUDGET), /^TemplateRenderError|b\.txt: no value for \{\{y\}\}/);
  });

  test('every missing value is named, file by file, once each: one round of fixing the values is enough', () => {
    const files = { 'a.txt': '{{x}} {{y}} {{x}}', 'b.txt': 'fine {{v}}', 'c.txt': '{{z}}', 'd.txt': '{{#list}}{{w}}{{/list}}{{&raw}}' };
    assert.throws(
      () => renderFiles(files, { v: 1, list: [1, 2] }, BUDGET),
      (err: Error) => err instanceof TemplateRenderError && err.message === 'a.txt: no value for {{x}}, {{y}}; c.txt: no value for {{z}}; d.txt: no value for {{w}}, {{{raw}}}',
    );
    assert.doesNotThrow(() => renderFiles(files, { v: 1, list: [1], x: 1, y: 2, z: 3, w: 4, raw: '<' }, BUDGET));
  });
});
