// duckdb-query.js - runs queries with DuckDB and prints their rows as JSON,
// for the tests that open dnntrace's outputs with DuckDB.
//
// usage: node duckdb-query.js NODE_MODULES < QUERIES
// QUERIES is a JSON object {"name": "SQL", ...}; the output is
// {"name": [{"column": value, ...}, ...], ...}, with integers too large for
// a JavaScript number as strings.
'use strict';
const path = require('path');

async function main() {
	const { DuckDBInstance } = require(
		path.join(process.argv[2], '@duckdb', 'node-api'));
	let input = '';
	for await (const chunk of process.stdin)
		input += chunk;
	const queries = JSON.parse(input);
	const db = await DuckDBInstance.create(':memory:');
	const con = await db.connect();
	const out = {};
	for (const [name, sql] of Object.entries(queries)) {
		try {
			const reader = await con.runAndReadAll(sql);
			out[name] = reader.getRowObjectsJson();
		} catch (e) {
			console.error(`${name}: ${e.message}\n${sql}`);
			process.exit(1);
		}
	}
	process.stdout.write(JSON.stringify(out));
}

main();
