package envelope

// The Kafka Connect schemas of Debezium's schema change records
// (--format debezium --ddl --with-schema), as Debezium's SchemaFactory
// builds them (schemaHistoryConnectorValueSchema, …KeySchema,
// schemaHistoryChangeSchema, …TableSchema, …ColumnSchema) and Kafka
// Connect's JsonConverter writes them with schemas.enable=true. They are
// fixed: the same for every record.

// sourceSchema is the source block's schema, the data records' too:
// io.debezium.connector.mysql.Source (BinlogSourceInfoStructMaker on
// SchemaFactory.sourceInfoSchemaBuilder, version 1).
func sourceSchema() fieldSchema {
	return fieldSchema{typ: "struct", name: "io.debezium.connector.mysql.Source", version: 1, field: "source", fields: []fieldSchema{
		str("version", false), str("connector", false), str("name", false), i64("ts_ms", false),
		{typ: "string", optional: true, name: "io.debezium.data.Enum", version: 1, def: `"false"`, field: "snapshot",
			params: [][2]string{{"allowed", "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"}}},
		str("db", false), str("sequence", true), i64("ts_us", true), i64("ts_ns", true), str("table", true),
		i64("server_id", false), str("gtid", true), str("file", false), i64("pos", false),
		{typ: "int32", field: "row"}, i64("thread", true), str("query", true),
	}}
}

func str(field string, optional bool) fieldSchema {
	return fieldSchema{typ: "string", optional: optional, field: field}
}

func i64(field string, optional bool) fieldSchema {
	return fieldSchema{typ: "int64", optional: optional, field: field}
}

func i32(field string, optional bool) fieldSchema {
	return fieldSchema{typ: "int32", optional: optional, field: field}
}

func strArray(field string) fieldSchema {
	return fieldSchema{typ: "array", optional: true, items: &fieldSchema{typ: "string"}, field: field}
}

// schemaChangeValueSchema is io.debezium.connector.mysql.SchemaChangeValue.
func schemaChangeValueSchema() fieldSchema {
	boolean := func(field string) fieldSchema { return fieldSchema{typ: "boolean", optional: true, field: field} }
	column := fieldSchema{typ: "struct", name: "io.debezium.connector.schema.Column", version: 1, fields: []fieldSchema{
		str("name", false), i32("jdbcType", false), i32("nativeType", true), str("typeName", false), str("typeExpression", true),
		str("charsetName", true), i32("length", true), i32("scale", true), i32("position", false),
		boolean("optional"), boolean("autoIncremented"), boolean("generated"), str("comment", true),
		str("defaultValueExpression", true), strArray("enumValues"),
	}}
	table := fieldSchema{typ: "struct", optional: true, name: "io.debezium.connector.schema.Table", version: 1, field: "table", fields: []fieldSchema{
		str("defaultCharsetName", true), strArray("primaryKeyColumnNames"),
		{typ: "array", items: &column, field: "columns"}, str("comment", true),
	}}
	chg := fieldSchema{typ: "struct", name: "io.debezium.connector.schema.Change", version: 1, fields: []fieldSchema{
		str("type", false), str("id", false), table,
	}}
	return fieldSchema{typ: "struct", name: "io.debezium.connector.mysql.SchemaChangeValue", version: 1, fields: []fieldSchema{
		sourceSchema(), i64("ts_ms", false), str("databaseName", true), str("schemaName", true), str("ddl", true),
		{typ: "array", items: &chg, field: "tableChanges"},
	}}
}

// schemaChangeKeySchema is io.debezium.connector.mysql.SchemaChangeKey.
func schemaChangeKeySchema() fieldSchema {
	return fieldSchema{typ: "struct", name: "io.debezium.connector.mysql.SchemaChangeKey", version: 1, fields: []fieldSchema{
		str("databaseName", false),
	}}
}

// ddlSchemas returns `{"schema":…,"payload":` of the schema change
// value and key, built on first use.
func (d *debezium) ddlSchemas() (val, key []byte) {
	if d.ddlVal == nil {
		v, k := schemaChangeValueSchema(), schemaChangeKeySchema()
		d.ddlVal = append(v.append([]byte(`{"schema":`)), `,"payload":`...)
		d.ddlKey = append(k.append([]byte(`{"schema":`)), `,"payload":`...)
	}
	return d.ddlVal, d.ddlKey
}
