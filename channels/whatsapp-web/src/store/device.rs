//! `DeviceStore`: the object's one linked device, serialized as JSON in
//! the single row of `wa_device` (why JSON: see the module docs of `store`).

use async_trait::async_trait;
use wacore::store::error::Result;
use wacore::store::traits::DeviceStore;
use wacore::store::Device;

use super::sql::Sql;
use super::{from_json, to_json, SqlBackend, DEVICE_ID};

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl<S: Sql + Send + Sync> DeviceStore for SqlBackend<S> {
    async fn save(&self, device: &Device) -> Result<()> {
        self.exec(
            "INSERT INTO wa_device (id, device) VALUES (?1, ?2)
             ON CONFLICT (id) DO UPDATE SET device = excluded.device",
            &[i64::from(DEVICE_ID).into(), to_json("device", device)?],
        )
    }

    async fn load(&self) -> Result<Option<Device>> {
        self.first(
            "SELECT device FROM wa_device WHERE id = ?1",
            &[i64::from(DEVICE_ID).into()],
        )?
        .map(|row| from_json("device", &row.text(0)?))
        .transpose()
    }

    async fn exists(&self) -> Result<bool> {
        self.holds(
            "SELECT EXISTS (SELECT 1 FROM wa_device WHERE id = ?1)",
            &[i64::from(DEVICE_ID).into()],
        )
    }

    /// Stores a fresh `Device` (new keys) unless one is there, as
    /// `InMemoryBackend` does, so `load` then finds it; the id is always
    /// [`DEVICE_ID`].
    async fn create(&self) -> Result<i32> {
        self.exec(
            "INSERT INTO wa_device (id, device) VALUES (?1, ?2) ON CONFLICT (id) DO NOTHING",
            &[
                i64::from(DEVICE_ID).into(),
                to_json("device", &Device::new())?,
            ],
        )?;
        Ok(DEVICE_ID)
    }
}
