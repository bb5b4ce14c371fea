// prompt.test.mjs: web/src/pages/dashboard/prompt.js: the project name the prompt box derives from a prompt.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { projectName, NAME_MAX } from '../../../web/src/pages/dashboard/prompt.js';

const PROMPTS = [
	'Build me a recipe box where I can save and tag my favourite dishes',
	'A todo app with dark mode',
	'I want a landing page for my bakery, with opening hours and a map',
	'please make a simple habit tracker that shows streaks',
	'Can you create an expense splitter for flatmates?',
	'portfolio site\nwith a gallery and a contact form',
	'  weather dashboard using the open-meteo API  ',
	'做一个待办事项应用，可以设置提醒',
	'Kanban board',
	'x'.repeat(300),
	'a'.repeat(20) + ' ' + 'b'.repeat(20) + ' ' + 'c'.repeat(20),
];

const words = (s) => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];

test('every name is short, non-empty, starts with a capital and is made of the first line\'s words in order', () => {
	for (const p of PROMPTS) {
		const n = projectName(p);
		assert.ok(n.length >= 1 && n.length <= NAME_MAX, `${JSON.stringify(n)} from ${JSON.stringify(p)}`);
		assert.equal(n, n.trim());
		assert.equal(n[0], n[0].toLocaleUpperCase('en'), n);
		const first = p.split('\n').find((l) => l.trim());
		const src = words(first).join(' ');
		assert.ok(src.includes(words(n).join(' ')), `${JSON.stringify(n)} is a run of the words of ${JSON.stringify(first)}`);
		assert.ok(words(n).length <= 5, n);
	}
});

test('the opening request words are dropped and the name stops where the description starts', () => {
	const n = projectName('Build me a recipe box where I can save dishes');
	assert.doesNotMatch(n, /^(build|me|a)\b/i);
	assert.doesNotMatch(n, /\bwhere\b/i);
	assert.match(n, /^Recipe box$/);
	assert.doesNotMatch(projectName('A todo app with dark mode'), /\bwith\b|^A\b/i);
	assert.doesNotMatch(projectName('I want a landing page for my bakery'), /\bfor\b|^I\b/);
	assert.doesNotMatch(projectName('Can you create an expense splitter?'), /\?|^Can\b/);
	assert.doesNotMatch(projectName('portfolio site\nwith a gallery'), /gallery/, 'only the first line');
});

test('a prompt of no usable words still gives a name', () => {
	assert.equal(projectName(''), 'New project');
	assert.equal(projectName('   \n  '), 'New project');
	assert.equal(projectName('!!! ???'), 'New project');
	assert.equal(projectName(null), 'New project');
	const long = projectName('y'.repeat(500));
	assert.ok(long.length <= NAME_MAX && /^Y/.test(long), long);
	const cjk = projectName('做一个待办事项应用，可以设置提醒');
	assert.ok(cjk.length >= 1 && cjk.length <= NAME_MAX, cjk);
});
