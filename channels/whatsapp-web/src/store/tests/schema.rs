use super::Sqlite;
use crate::store::sql::{Sql, Value};
use crate::store::{list, tuples, MIGRATIONS};

fn texts(db: &Sqlite, sql: &str) -> Vec<String> {
    db.query(sql, &[])
        .unwrap()
        .into_iter()
        .map(|row| match &row[0] {
            Value::Text(s) => s.clone(),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn every_table_and_index_is_prefixed_wa() {
    let db = Sqlite::migrated();
    let names = texts(
        &db,
        "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name != '_migrations' ORDER BY name",
    );
    assert_eq!(names.len(), 20, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("wa_")), "{names:?}");
}

#[test]
fn migrations_apply_once_and_record_their_version() {
    let db = Sqlite::migrated();
    db.migrate(MIGRATIONS);
    let versions = db
        .query("SELECT version FROM _migrations ORDER BY version", &[])
        .unwrap();
    let expected: Vec<Vec<Value>> = (1..=MIGRATIONS.len() as i64)
        .map(|v| vec![Value::Int(v)])
        .collect();
    assert_eq!(versions, expected);
}

#[test]
fn placeholders_number_shared_then_each_row() {
    assert_eq!(tuples(0, 2, 2), "(?1, ?2), (?3, ?4)");
    assert_eq!(tuples(2, 2, 1), "(?1, ?2, ?3), (?1, ?2, ?4)");
    assert_eq!(list(1, 3), "?2, ?3, ?4");
    assert_eq!(list(0, 1), "?1");
}
