// A private header of the device stage (the worker stage is its friend).
#pragma once
