// Independent reader for the table tests: prints a table file as JSON
// ({rows, metadata, columns: [{name, type, nullable, values}]}) using npm apache-arrow (Arrow IPC)
// and parquet-wasm (Parquet, converted to Arrow IPC first).
// Usage: node read_table.js arrow|parquet FILE
const fs = require('fs');
const arrow = require('apache-arrow');
const [format, file] = process.argv.slice(2);
let bytes = fs.readFileSync(file);
if (format === 'parquet') {
  const pq = require('parquet-wasm/node');
  bytes = pq.readParquet(new Uint8Array(bytes)).intoIPCStream();
}
const table = arrow.tableFromIPC(bytes);
const columns = table.schema.fields.map((f) => {
  const col = table.getChild(f.name);
  const values = [];
  for (let i = 0; i < table.numRows; i++) {
    const v = col.get(i);
    values.push(typeof v === 'bigint' ? v.toString() : (typeof v === 'number' && !isFinite(v) ? String(v) : v));
  }
  return { name: f.name, type: String(f.type), nullable: f.nullable, values };
});
const metadata = Object.fromEntries(table.schema.metadata);
console.log(JSON.stringify({ rows: table.numRows, metadata, columns }));
