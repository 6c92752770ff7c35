//! The Vulkan loader (libvulkan, opened at run time) and an instance; the
//! physical devices it sees and their identities.

use super::info::{self, PhysicalDevice};
use ash::vk;
use std::ffi::{CStr, c_void};
use std::sync::Mutex;

/// A loaded loader and a created instance; destroyed on drop.
pub struct Instance {
    // Field order: the instance is destroyed (Drop) before the library closes.
    pub instance: ash::Instance,
    pub entry: ash::Entry,
    /// The instance API version requested (at most 1.3).
    pub api_version: u32,
    /// Where the loader's messages go. A messenger given at creation is
    /// also called during vkDestroyInstance, so this outlives the instance.
    _messages: Box<Mutex<Vec<String>>>,
}

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: every child object holds an Arc of the instance, so none is left.
        unsafe { self.instance.destroy_instance(None) };
    }
}

/// The loader's environment variables that pick drivers, as set now: part
/// of every "no driver" message.
fn driver_environment() -> String {
    let set: Vec<String> = ["VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| format!("{k}={v}")))
        .collect();
    if set.is_empty() { String::new() } else { format!(" [{}]", set.join(", ")) }
}

/// Collects the loader's error and warning messages while the instance is
/// created, so a failure can say why in the loader's own words.
unsafe extern "system" fn collect_messages(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if severity
        .intersects(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING)
        && !data.is_null()
        && !user.is_null()
    {
        // SAFETY: the loader passes a valid callback-data struct; `user` is
        // the boxed Mutex that lives as long as the instance (or, when
        // creation fails, across the failed call).
        let (data, sink) = unsafe { (&*data, &*(user as *const Mutex<Vec<String>>)) };
        if !data.p_message.is_null() {
            // SAFETY: p_message is a NUL-terminated string for this call.
            let text = unsafe { CStr::from_ptr(data.p_message) }.to_string_lossy().trim().to_string();
            if let Ok(mut v) = sink.lock()
                && !v.contains(&text)
            {
                v.push(text);
            }
        }
    }
    vk::FALSE
}

impl Instance {
    /// Opens the loader and creates an instance. The error is the loader's
    /// reason: the library that did not open, or the VkResult with the
    /// loader's messages ("Found no drivers!") and the driver variables set.
    pub fn new() -> Result<Instance, String> {
        // SAFETY: loading the system's Vulkan loader runs its initialisers;
        // that is the documented way to use it.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| format!("cannot load the Vulkan loader (libvulkan; Debian: libvulkan1): {e}"))?;
        // SAFETY: plain queries through a loaded entry.
        let loader_version = unsafe { entry.try_enumerate_instance_version() }
            .map_err(|e| format!("vkEnumerateInstanceVersion: {e:?}"))?
            .unwrap_or(vk::API_VERSION_1_0);
        if loader_version < vk::API_VERSION_1_1 {
            return Err(format!(
                "the Vulkan loader supports API {}, ulpgate needs 1.1",
                info::version_string(loader_version)
            ));
        }
        let api_version = loader_version.min(vk::API_VERSION_1_3);
        // SAFETY: as above.
        let available = unsafe { entry.enumerate_instance_extension_properties(None) }.unwrap_or_default();
        let has_debug_utils = available.iter().any(|e| e.extension_name_as_c_str() == Ok(ash::ext::debug_utils::NAME));

        let app = vk::ApplicationInfo::default()
            .application_name(c"ulpgate")
            .engine_name(c"ulpgate")
            .api_version(api_version);
        let messages: Box<Mutex<Vec<String>>> = Box::new(Mutex::new(Vec::new()));
        let mut messenger = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::ERROR | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
            )
            .message_type(vk::DebugUtilsMessageTypeFlagsEXT::GENERAL | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION)
            .pfn_user_callback(Some(collect_messages))
            .user_data(&*messages as *const Mutex<Vec<String>> as *mut c_void);
        let extensions = [ash::ext::debug_utils::NAME.as_ptr()];
        let mut create = vk::InstanceCreateInfo::default().application_info(&app);
        if has_debug_utils {
            create = create.enabled_extension_names(&extensions).push_next(&mut messenger);
        }
        // SAFETY: the create info and everything it points to outlive the call.
        let created = unsafe { entry.create_instance(&create, None) };
        match created {
            Ok(instance) => Ok(Instance { instance, entry, api_version, _messages: messages }),
            Err(e) => {
                let said = messages.lock().map(|m| m.join("; ")).unwrap_or_default();
                let said = if said.is_empty() { String::new() } else { format!(": {said}") };
                // Where to get one, for the machine that has none at all.
                let hint = if e == vk::Result::ERROR_INCOMPATIBLE_DRIVER {
                    "; a Vulkan driver is needed (on the CPU, Mesa lavapipe: Debian's mesa-vulkan-drivers)"
                } else {
                    ""
                };
                Err(format!("vkCreateInstance failed with {e:?} ({e}){said}{}{hint}", driver_environment()))
            }
        }
    }

    /// Every physical device, in the loader's order, with its identity.
    pub fn physical_devices(&self) -> Result<Vec<PhysicalDevice>, String> {
        // SAFETY: a valid instance.
        let handles = unsafe { self.instance.enumerate_physical_devices() }
            .map_err(|e| format!("vkEnumeratePhysicalDevices failed with {e:?} ({e})"))?;
        if handles.is_empty() {
            return Err(format!("the Vulkan loader found no physical device{}", driver_environment()));
        }
        Ok(handles.into_iter().enumerate().map(|(i, h)| info::describe(self, i, h)).collect())
    }
}
