"""nn.utils.convert_conv2d_weight_memory_format / convert_conv3d_weight_memory_format: the weights of
every (transposed) convolution in a module tree re-laid out in a memory format."""
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """module (returned) with each Conv2d / ConvTranspose2d weight in memory_format (torch.channels_last, ...)."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """module (returned) with each Conv3d / ConvTranspose3d weight in memory_format (torch.channels_last_3d, ...)."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
