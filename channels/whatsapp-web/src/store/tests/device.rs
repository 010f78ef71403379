use wacore::store::traits::{Backend, DeviceStore};
use wacore::store::Device;

use super::{backend, differential, run};
use crate::store::sql::{Sql, Value};
use crate::store::DEVICE_ID;

/// `Device` has no `PartialEq`; its serialized form stands for it.
fn json(device: &Device) -> serde_json::Value {
    serde_json::to_value(device).unwrap()
}

#[test]
fn create_materializes_one_device() {
    async fn scenario<B: Backend>(b: &B) -> (bool, bool, bool, bool) {
        let before = (b.exists().await.unwrap(), b.load().await.unwrap().is_some());
        b.create().await.unwrap();
        (
            before.0,
            before.1,
            b.exists().await.unwrap(),
            b.load().await.unwrap().is_some(),
        )
    }
    assert_eq!(differential!(scenario), (false, false, true, true));
}

#[test]
fn create_is_idempotent_and_returns_the_one_id() {
    let b = backend();
    run(async {
        assert_eq!(b.create().await.unwrap(), DEVICE_ID);
        let first = json(&b.load().await.unwrap().unwrap());
        assert_eq!(b.create().await.unwrap(), DEVICE_ID);
        assert_eq!(json(&b.load().await.unwrap().unwrap()), first);
    });
}

#[test]
fn save_and_load_round_trip_the_whole_device() {
    let b = backend();
    run(async {
        b.create().await.unwrap();
        let mut device = Device::new();
        device.pn = Some("15550000001@s.whatsapp.net".parse().unwrap());
        device.lid = Some("100000012345678@lid".parse().unwrap());
        device.push_name = "gsv".into();
        device.next_pre_key_id = 813;
        device.edge_routing_info = Some(vec![1, 2, 3]);
        device.props_hash = Some("hash".into());
        device.nct_salt = Some(vec![0; 16]);
        device.login_counter = -3;
        device.lid_migrated = true;
        device.last_signed_pre_key_rotation_ms = i64::MAX;
        b.save(&device).await.unwrap();
        let loaded = b.load().await.unwrap().unwrap();
        assert_eq!(json(&loaded), json(&device));
        // The keys survive as keys, not only as JSON.
        assert_eq!(
            loaded.identity_key.public_key.serialize(),
            device.identity_key.public_key.serialize()
        );
        // Saving again overwrites the one row.
        device.push_name = "renamed".into();
        b.save(&device).await.unwrap();
        assert_eq!(b.load().await.unwrap().unwrap().push_name, "renamed");
    });
    let rows = b
        .sql()
        .query("SELECT id, length(device) FROM wa_device", &[])
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0], Value::Int(i64::from(DEVICE_ID)));
    // One row of a few KB: JSON's byte arrays cost, but not much.
    let Value::Int(len) = rows[0][1] else {
        panic!("length")
    };
    assert!(len < 4096, "device row is {len} bytes");
}

#[test]
fn an_unreadable_device_row_is_an_error_without_its_content() {
    let b = backend();
    b.sql()
        .query(
            "INSERT INTO wa_device (id, device) VALUES (1, '{\"noise_key\": \"secret\"')",
            &[],
        )
        .unwrap();
    let error = run(b.load()).err().unwrap().to_string();
    assert!(
        error.starts_with("data validation failed: device: unreadable JSON"),
        "{error}"
    );
    assert!(!error.contains("secret"), "{error}");
}
