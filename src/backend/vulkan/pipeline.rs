//! A kernel as a compute pipeline: its embedded SPIR-V, a descriptor-set
//! layout with one storage buffer per buffer argument (set 0, bindings
//! 0..), and a push-constant block of 4 bytes per scalar argument.

use super::context::Shared;
use super::shaders;
use crate::backend::gpu::KernelSpec;
use anyhow::{Result, anyhow, bail};
use ash::vk;
use std::ffi::CString;
use std::sync::Arc;

pub struct VkKernel {
    pub shared: Arc<Shared>,
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    pub set_layout: vk::DescriptorSetLayout,
    /// Bytes of the push-constant block (4 per scalar).
    pub push_bytes: u32,
    /// Each binding's type, as the shader declares it: storage buffers,
    /// and uniform buffers for small read-only tables that every
    /// invocation reads at the same offsets (drivers load those once).
    pub descriptor_types: Vec<vk::DescriptorType>,
}

impl VkKernel {
    pub fn new(shared: &Arc<Shared>, spec: &'static KernelSpec) -> Result<VkKernel> {
        let shader = shaders::find(spec.name)
            .ok_or_else(|| anyhow!("kernel {}: this build has no shaders/{}.comp or .wgsl", spec.name, spec.name))?;
        let words = shader.words();
        match shaders::entry_point(&words) {
            Some((name, size)) if name == spec.name && size == spec.workgroup => {}
            found => bail!(
                "kernel {}: its SPIR-V declares {found:?}, the spec says ({:?}, {:?})",
                spec.name,
                spec.name,
                spec.workgroup
            ),
        }
        let caps = shaders::capabilities(&words);
        for (cap, feature, enabled) in [
            (shaders::CAPABILITY_INT64, "shaderInt64", shared.features.shader_int64),
            (shaders::CAPABILITY_FLOAT64, "shaderFloat64", shared.features.shader_float64),
        ] {
            if caps.contains(&cap) && enabled != vk::TRUE {
                bail!("kernel {}: needs the Vulkan feature {feature}, which this device does not offer", spec.name);
            }
        }
        let limits = &shared.limits;
        let invocations: u32 = spec.workgroup.iter().product();
        if invocations > limits.max_compute_work_group_invocations
            || spec.workgroup.iter().zip(limits.max_compute_work_group_size).any(|(&n, max)| n > max)
        {
            bail!(
                "kernel {}: work groups of {:?} exceed the device's limits ({} invocations, {:?})",
                spec.name,
                spec.workgroup,
                limits.max_compute_work_group_invocations,
                limits.max_compute_work_group_size
            );
        }
        let push_bytes = 4 * spec.scalars as u32;
        if push_bytes > shared.limits.max_push_constants_size {
            bail!(
                "kernel {}: {} scalars need {push_bytes} push-constant bytes, the device allows {}",
                spec.name,
                spec.scalars,
                shared.limits.max_push_constants_size
            );
        }
        let uniform = shaders::uniform_bindings(&words);
        let descriptor_types: Vec<vk::DescriptorType> = (0..spec.buffers as u32)
            .map(|b| {
                if uniform.contains(&b) {
                    vk::DescriptorType::UNIFORM_BUFFER
                } else {
                    vk::DescriptorType::STORAGE_BUFFER
                }
            })
            .collect();
        let device = &shared.device;
        let mut kernel = VkKernel {
            shared: shared.clone(),
            pipeline: vk::Pipeline::null(),
            layout: vk::PipelineLayout::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            push_bytes,
            descriptor_types,
        };
        let bindings: Vec<vk::DescriptorSetLayoutBinding> = (0..spec.buffers as u32)
            .map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(kernel.descriptor_types[b as usize])
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let flags = if shared.push_descriptor.is_some() {
            vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR
        } else {
            vk::DescriptorSetLayoutCreateFlags::empty()
        };
        let set_info = vk::DescriptorSetLayoutCreateInfo::default().flags(flags).bindings(&bindings);
        // SAFETY: valid device and create infos; `kernel` destroys what was
        // created so far if a later step fails.
        kernel.set_layout = unsafe { device.create_descriptor_set_layout(&set_info, None) }
            .map_err(|e| anyhow!("kernel {}: vkCreateDescriptorSetLayout: {e:?}", spec.name))?;
        let ranges =
            [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).offset(0).size(push_bytes)];
        let set_layouts = [kernel.set_layout];
        let mut layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if push_bytes > 0 {
            layout_info = layout_info.push_constant_ranges(&ranges);
        }
        // SAFETY: as above.
        kernel.layout = unsafe { device.create_pipeline_layout(&layout_info, None) }
            .map_err(|e| anyhow!("kernel {}: vkCreatePipelineLayout: {e:?}", spec.name))?;

        let module_info = vk::ShaderModuleCreateInfo::default().code(&words);
        // SAFETY: SPIR-V validated at build time.
        let module = unsafe { device.create_shader_module(&module_info, None) }
            .map_err(|e| anyhow!("kernel {}: vkCreateShaderModule: {e:?}", spec.name))?;
        let entry = CString::new(spec.name).map_err(|_| anyhow!("kernel name {:?} has a NUL", spec.name))?;
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&entry);
        let create = [vk::ComputePipelineCreateInfo::default().stage(stage).layout(kernel.layout)];
        // SAFETY: as above; the module may go once the pipeline exists.
        let created = crate::trace::timed(&format!("vulkan: pipeline {}", spec.name), || unsafe {
            device.create_compute_pipelines(shared.pipeline_cache, &create, None)
        });
        // SAFETY: no longer needed by anything.
        unsafe { device.destroy_shader_module(module, None) };
        kernel.pipeline = created
            .map_err(|(_, e)| anyhow!("kernel {}: the driver failed to build its pipeline: {e:?}", spec.name))?[0];
        Ok(kernel)
    }
}

impl Drop for VkKernel {
    fn drop(&mut self) {
        let device = &self.shared.device;
        // SAFETY: streams keep the kernels they recorded alive until their
        // work completed; destroying null handles is a no-op.
        unsafe {
            device.destroy_pipeline(self.pipeline, None);
            device.destroy_pipeline_layout(self.layout, None);
            device.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}
